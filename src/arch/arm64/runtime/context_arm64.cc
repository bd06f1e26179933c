// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// arm64's ucontext: x0..x30, sp, pc and pstate in mcontext_t, exactly the
// saved frame's slots.
#include "arch/runtime/context.h"

namespace dprobe::arch {

using namespace arm64;

void load_regs(const ucontext_t& context, SavedRegs& regs) noexcept {
  const mcontext_t& m = context.uc_mcontext;
  for (uint16_t i = 0; i < 31; ++i) regs.slot[kX0 + i] = m.regs[i];
  regs.slot[kSp] = m.sp;
  regs.slot[kPc] = m.pc;
  regs.slot[kPstate] = m.pstate;
}

void store_regs(const SavedRegs& regs, ucontext_t& context) noexcept {
  mcontext_t& m = context.uc_mcontext;
  for (uint16_t i = 0; i < 31; ++i) m.regs[i] = regs.slot[kX0 + i];
  m.sp = regs.slot[kSp];
  m.pc = regs.slot[kPc];
  m.pstate = regs.slot[kPstate];
}

uint64_t context_pc(const ucontext_t& context) noexcept { return context.uc_mcontext.pc; }
uint64_t context_sp(const ucontext_t& context) noexcept { return context.uc_mcontext.sp; }

void set_context_pc(ucontext_t& context, uint64_t pc) noexcept { context.uc_mcontext.pc = pc; }

// A BRK from user space reports TRAP_BRKPT (the kernel's brk_handler).
bool is_breakpoint_trap(const siginfo_t& info) noexcept { return info.si_code == TRAP_BRKPT; }

}  // namespace dprobe::arch
