// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The signal handler's view of the interrupted program: the host ISA's
// ucontext translated to and from the saved register frame the probe
// engine and the fetch programs use.
//
//   SavedRegs regs;  load_regs(uc, regs);  ...  store_regs(regs, uc);
#ifndef DPROBE_ARCH_RUNTIME_CONTEXT_H_
#define DPROBE_ARCH_RUNTIME_CONTEXT_H_

#include <signal.h>
#include <ucontext.h>

#include <cstdint>

#include "arch/probe_insn.h"

namespace dprobe::arch {

void load_regs(const ucontext_t& context, SavedRegs& regs) noexcept;
// Writes back what a probe may change: every general register, pc, flags.
void store_regs(const SavedRegs& regs, ucontext_t& context) noexcept;
uint64_t context_pc(const ucontext_t& context) noexcept;
uint64_t context_sp(const ucontext_t& context) noexcept;
// Whether a SIGTRAP came from a breakpoint instruction (x86_64: int3
// reports SI_KERNEL; arm64: brk reports TRAP_BRKPT). A raise() or kill()
// says otherwise, and is never the engine's.
bool is_breakpoint_trap(const siginfo_t& info) noexcept;
void set_context_pc(ucontext_t& context, uint64_t pc) noexcept;

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_CONTEXT_H_
