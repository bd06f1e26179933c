// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include <array>

#include "arch/runtime/context.h"

namespace dprobe::arch {
namespace {

using namespace x86_64;

// Where each general register lives in mcontext_t's gregs.
struct GregMap {
  Reg reg;
  int greg;
};
constexpr std::array<GregMap, 18> kGregs = {{
    {kAx, REG_RAX},
    {kBx, REG_RBX},
    {kCx, REG_RCX},
    {kDx, REG_RDX},
    {kSi, REG_RSI},
    {kDi, REG_RDI},
    {kBp, REG_RBP},
    {kSp, REG_RSP},
    {kR8, REG_R8},
    {kR9, REG_R9},
    {kR10, REG_R10},
    {kR11, REG_R11},
    {kR12, REG_R12},
    {kR13, REG_R13},
    {kR14, REG_R14},
    {kR15, REG_R15},
    {kIp, REG_RIP},
    {kFlags, REG_EFL},
}};

uint64_t greg(const ucontext_t& uc, int index) {
  return static_cast<uint64_t>(uc.uc_mcontext.gregs[index]);
}

}  // namespace

void load_regs(const ucontext_t& context, SavedRegs& regs) noexcept {
  for (const GregMap& m : kGregs) regs.slot[m.reg] = greg(context, m.greg);
  // The fixed slots' values (ds and es flat, not in a system call), then
  // what the frame tells: CSGSFS packs cs, gs, fs and (since Linux 4.8,
  // UC_SIGCONTEXT_SS; 0 from an older kernel) ss in 16 bits each.
  x86_64::fill_fixed_slots(regs);
  const uint64_t segments = greg(context, REG_CSGSFS);
  regs.slot[kCs] = segments & 0xffff;
  regs.slot[kGs] = (segments >> 16) & 0xffff;
  regs.slot[kFs] = (segments >> 32) & 0xffff;
  if (const uint64_t ss = segments >> 48; ss != 0) regs.slot[kSs] = ss;
}

void store_regs(const SavedRegs& regs, ucontext_t& context) noexcept {
  for (const GregMap& m : kGregs)
    context.uc_mcontext.gregs[m.greg] = static_cast<greg_t>(regs.slot[m.reg]);
}

uint64_t context_pc(const ucontext_t& context) noexcept { return greg(context, REG_RIP); }
uint64_t context_sp(const ucontext_t& context) noexcept { return greg(context, REG_RSP); }

void set_context_pc(ucontext_t& context, uint64_t pc) noexcept {
  context.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(pc);
}

bool is_breakpoint_trap(const siginfo_t& info) noexcept { return info.si_code == SI_KERNEL; }

}  // namespace dprobe::arch
