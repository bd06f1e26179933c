// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The guarded system call's C++ side, for every ISA; the window itself is
// assembly in arch/<isa>/runtime/guarded_syscall_<isa>.cc.
#include "arch/runtime/guarded_syscall.h"

#include "arch/runtime/context.h"

// The ISA's routine and the labels of its window.
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
