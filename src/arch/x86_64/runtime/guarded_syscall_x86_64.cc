// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The guarded system call on x86_64: the compare and the `syscall` are
// adjacent, and [window, insn] is the range a handler moves out of
// (arch/runtime/guarded_syscall.cc).

//   long dprobe_guarded_syscall(nr, a, b, c, d, const uint32_t* counter, uint32_t seen)
__asm__(
    ".hidden dprobe_guarded_syscall\n"
    ".hidden dprobe_guard_window\n"
    ".hidden dprobe_guard_insn\n"
    ".hidden dprobe_guard_interrupted\n"
    ".globl dprobe_guarded_syscall\n"
    ".globl dprobe_guard_window\n"
    ".globl dprobe_guard_insn\n"
    ".globl dprobe_guard_interrupted\n"
    ".text\n"
    ".p2align 4\n"
    ".type dprobe_guarded_syscall,@function\n"
    "dprobe_guarded_syscall:\n"
    "  mov %rdi, %rax\n"
    "  mov %rsi, %rdi\n"
    "  mov %rdx, %rsi\n"
    "  mov %rcx, %rdx\n"
    "  mov %r8, %r10\n"
    "  mov 8(%rsp), %ecx\n"
    "dprobe_guard_window:\n"
    "  cmp %ecx, (%r9)\n"
    "  jne dprobe_guard_interrupted\n"
    "dprobe_guard_insn:\n"
    "  syscall\n"
    "  ret\n"
    "dprobe_guard_interrupted:\n"
    "  mov $-512, %rax\n"
    "  ret\n"
    ".size dprobe_guarded_syscall, .-dprobe_guarded_syscall\n");
