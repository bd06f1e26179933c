// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The guarded system call on arm64: the counter's load and compare and
// the `svc` are adjacent, and [window, insn] is the range a handler moves
// out of (arch/runtime/guarded_syscall.cc). A thread interrupted in the
// call itself has its pc past the svc.
#include <cstdint>

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
    ".type dprobe_guarded_syscall,%function\n"
    "dprobe_guarded_syscall:\n"
    "  mov x8, x0\n"
    "  mov x0, x1\n"
    "  mov x1, x2\n"
    "  mov x2, x3\n"
    "  mov x3, x4\n"
    "dprobe_guard_window:\n"
    "  ldr w9, [x5]\n"
    "  cmp w9, w6\n"
    "  b.ne dprobe_guard_interrupted\n"
    "dprobe_guard_insn:\n"
    "  svc #0\n"
    "  ret\n"
    "dprobe_guard_interrupted:\n"
    "  mov x0, #-512\n"
    "  ret\n"
    ".size dprobe_guarded_syscall, .-dprobe_guarded_syscall\n");
