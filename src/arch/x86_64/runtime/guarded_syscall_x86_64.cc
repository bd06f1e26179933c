// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The guarded system call on x86_64: the compare and the `syscall` are
// adjacent, and [window, insn] is the range a handler moves out of.
#include "arch/runtime/context.h"
#include "arch/runtime/guarded_syscall.h"

//   long dprobe_guarded_syscall(nr, a, b, c, d, const uint32_t* counter, uint32_t seen)
__asm__(
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
extern "C" {
long dprobe_guarded_syscall(long nr, long a, long b, long c, long d, const uint32_t* counter,
                            uint32_t seen);
void dprobe_guard_window();
void dprobe_guard_insn();
void dprobe_guard_interrupted();
}

namespace dprobe::arch {

long guarded_syscall(long nr, long a, long b, long c, long d, const uint32_t* counter,
                     uint32_t seen) noexcept {
  return dprobe_guarded_syscall(nr, a, b, c, d, counter, seen);
}

void leave_guarded_window(ucontext_t& context) noexcept {
  const uint64_t pc = context_pc(context);
  if (pc >= reinterpret_cast<uint64_t>(&dprobe_guard_window) &&
      pc <= reinterpret_cast<uint64_t>(&dprobe_guard_insn)) {
    set_context_pc(context, reinterpret_cast<uint64_t>(&dprobe_guard_interrupted));
  }
}

}  // namespace dprobe::arch
