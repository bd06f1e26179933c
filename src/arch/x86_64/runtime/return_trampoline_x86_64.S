/* Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
 *
 * dprobe_return_common: where a return-probed function comes back to.
 *
 * A probed call's return address was replaced by the address of one of the
 * agent's return stubs. The function's `ret` jumps to that stub, which
 * pushes its own index -- into the very slot the return address was popped
 * from -- and jumps here. This code saves the registers, calls
 * dprobe_return_hit(index, frame, d0 or xmm0) (agent/return_probes.cc), which runs the
 * return handlers and answers the real return address; that goes back into
 * the slot, the registers come back, and a jump through the slot goes on
 * to the caller with the stack exactly as the function's own `ret` left it.
 *
 * The integer return value (rax, rdx) is kept with the other general
 * registers; xmm0's low half is passed to the handler for $retval:f32/f64
 * (only read here, never written). The SSE one (xmm0, xmm1) and x87's st0
 * are kept by the handler itself: the hit path is built without SSE (-mno-sse) and uses no
 * floating point, as for an optimized entry, whose trampoline saves no
 * vector register either (tests/integration/hit_path_test.cc checks both). */

  .text
  .p2align 4
  .globl dprobe_return_common
  .hidden dprobe_return_common
  .type dprobe_return_common, @function
dprobe_return_common:
  .cfi_startproc
  /* Not a frame an unwinder should walk: the stub's own CFI stands for it. */
  .cfi_undefined rip
  /* The SavedRegs frame (arch/x86_64/regs.h) in place, just below the
   * return slot, so that the handler reads the registers where they are:
   * ip, flags and the fixed slots above r15, and sp between rbp and r8,
   * are left for it to fill (arch::complete_return_regs). */
  lea -72(%rsp), %rsp
  push %r15
  push %r14
  push %r13
  push %r12
  push %r11
  push %r10
  push %r9
  push %r8
  lea -8(%rsp), %rsp
  push %rbp
  push %rdi
  push %rsi
  push %rdx
  push %rcx
  push %rbx
  push %rax
  mov %rsp, %rbx            /* the frame; rbx survives the call */
  and $-16, %rsp
  mov 200(%rbx), %rdi       /* the stub's index, in the return slot past the frame */
  mov %rbx, %rsi
  xor %edx, %edx            /* xmm0's low half, for $retval:f64, only when asked: */
  cmpb $0, dprobe_read_float_return(%rip)
  je 1f                     /* a legacy SSE move may cost an AVX state transition */
  movq %xmm0, %rdx
1:
  call dprobe_return_hit
  mov %rax, 200(%rbx)       /* the return slot gets the real address back */
  mov %rbx, %rsp
  pop %rax
  pop %rbx
  pop %rcx
  pop %rdx
  pop %rsi
  pop %rdi
  pop %rbp
  lea 8(%rsp), %rsp
  pop %r8
  pop %r9
  pop %r10
  pop %r11
  pop %r12
  pop %r13
  pop %r14
  pop %r15
  /* Not `ret`: the function's own ret already took the return stack
   * buffer's entry for this return, and a second ret would take the one
   * its caller's return needs, so every return up the chain would be
   * mispredicted. An indirect jump leaves that buffer as it is. The slot
   * is in the red zone once rsp moves past it: no signal frame lands there. */
  lea 80(%rsp), %rsp
  jmp *-8(%rsp)
  .cfi_endproc
  .size dprobe_return_common, .-dprobe_return_common

  .section .note.GNU-stack,"",@progbits
