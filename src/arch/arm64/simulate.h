// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Simulation of the instructions decode_insn marks kSimulate, on the saved
// registers of a hit (the kernel's simulate-insn.c): what the CPU would
// have done to pc, x30, the destination register and NZCV's readers,
// without running the instruction.
//
//   regs.slot[kPc] = probe_address;  // the trap handler's job
//   if (simulate(d, regs, memory) == SimulateStatus::kFault) deliver_segv();
//
// Runs inside a signal handler: no allocation, no libc, nothing but
// arithmetic on `regs` and calls through MemoryAccess.
#ifndef DPROBE_ARCH_ARM64_SIMULATE_H_
#define DPROBE_ARCH_ARM64_SIMULATE_H_

#include <cstddef>
#include <cstdint>

#include "arch/arm64/decode.h"
#include "arch/arm64/regs.h"
#include "arch/memory_access.h"

namespace dprobe::arch::arm64 {

enum class SimulateStatus : uint8_t {
  kOk,
  kFault,         // a literal load's read failed; the registers are unchanged
  kNotSimulated,  // `d` is not kSimulate; the registers are unchanged
};

// PSTATE's condition flags, as the saved pstate holds them.
inline constexpr uint64_t kFlagN = uint64_t{1} << 31;
inline constexpr uint64_t kFlagZ = uint64_t{1} << 30;
inline constexpr uint64_t kFlagC = uint64_t{1} << 29;
inline constexpr uint64_t kFlagV = uint64_t{1} << 28;

// Whether A64 condition `cond` (0..15: eq ne cs cc mi pl vs vc hi ls ge lt
// gt le al nv) holds for the NZCV bits of `pstate`. AL and NV always hold.
bool condition_holds(uint8_t cond, uint64_t pstate);

// Applies `d`'s effect to `regs`, whose pc is the probed instruction's
// address: sets pc to the branch target or the next instruction, x30 for
// BL/BLR, the destination of ADR/ADRP and the literal loads.
SimulateStatus simulate(const Decoded& d, SavedRegs& regs, MemoryAccess& memory);

}  // namespace dprobe::arch::arm64

#endif  // DPROBE_ARCH_ARM64_SIMULATE_H_
