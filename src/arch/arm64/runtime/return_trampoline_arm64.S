/* Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
 *
 * dprobe_return_common: where a return-probed function comes back to, on
 * arm64. The function's `ret` went to one of the agent's return stubs,
 * which put its index in x16 and jumped here. This code saves x0..x30 and
 * the vector registers that carry return values (q0..q7), calls
 * dprobe_return_hit(index, frame, d0 or xmm0) (agent/return_probes.cc), which runs the
 * return handlers and answers the real return address, restores
 * everything and branches there with x30 set to it, as the function's own
 * `ret` would have left the registers. */

  .text
  .p2align 4
  .globl dprobe_return_common
  .hidden dprobe_return_common
  .type dprobe_return_common, %function
dprobe_return_common:
  .cfi_startproc
  /* Not a frame an unwinder should walk: the stub's own CFI stands for it. */
  .cfi_undefined x30
  /* The SavedRegs frame (arch/arm64/regs.h) in place: x0..x30, then sp,
   * pc and pstate for the handler to fill (arch::complete_return_regs);
   * q0..q7 past it. */
  sub sp, sp, #400
  stp x0, x1, [sp, #0]
  stp x2, x3, [sp, #16]
  stp x4, x5, [sp, #32]
  stp x6, x7, [sp, #48]
  stp x8, x9, [sp, #64]
  stp x10, x11, [sp, #80]
  stp x12, x13, [sp, #96]
  stp x14, x15, [sp, #112]
  stp x16, x17, [sp, #128]
  stp x18, x19, [sp, #144]
  stp x20, x21, [sp, #160]
  stp x22, x23, [sp, #176]
  stp x24, x25, [sp, #192]
  stp x26, x27, [sp, #208]
  stp x28, x29, [sp, #224]
  str x30, [sp, #240]
  stp q0, q1, [sp, #272]
  stp q2, q3, [sp, #304]
  stp q4, q5, [sp, #336]
  stp q6, q7, [sp, #368]
  mov x0, x16
  mov x1, sp
  ldr x2, [sp, #272]        /* d0, as saved with q0: $retval:f32/f64 */
  bl dprobe_return_hit
  mov x17, x0
  ldp q0, q1, [sp, #272]
  ldp q2, q3, [sp, #304]
  ldp q4, q5, [sp, #336]
  ldp q6, q7, [sp, #368]
  ldp x0, x1, [sp, #0]
  ldp x2, x3, [sp, #16]
  ldp x4, x5, [sp, #32]
  ldp x6, x7, [sp, #48]
  ldp x8, x9, [sp, #64]
  ldp x10, x11, [sp, #80]
  ldp x12, x13, [sp, #96]
  ldp x14, x15, [sp, #112]
  ldr x16, [sp, #128]
  ldp x18, x19, [sp, #144]
  ldp x20, x21, [sp, #160]
  ldp x22, x23, [sp, #176]
  ldp x24, x25, [sp, #192]
  ldp x26, x27, [sp, #208]
  ldp x28, x29, [sp, #224]
  add sp, sp, #400
  mov x30, x17
  br x17
  .cfi_endproc
  .size dprobe_return_common, .-dprobe_return_common

  .section .note.GNU-stack,"",%progbits
