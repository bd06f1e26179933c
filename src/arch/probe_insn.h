// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the probe engine asks of the architecture, for the host's ISA. This
// is the one arch header core code includes; the ISA directories stay
// behind it (the kernel's arch_prepare_kprobe / arch_arm_kprobe family).
//
//   auto insn = prepare_insn(function_bytes, function_start, probe_address);
//   write_slot(*insn, slot_address, slot_bytes);    // out-of-line copy
//   ... on a hit:
//   resume_after_hit(*insn, slot_address, regs, memory);   // sets regs' ip
#ifndef DPROBE_ARCH_PROBE_INSN_H_
#define DPROBE_ARCH_PROBE_INSN_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/result.h"

#if defined(__x86_64__)
#include "arch/x86_64/classify.h"
#include "arch/x86_64/emulate.h"
#include "arch/x86_64/regs.h"
#else
#error "the probe engine supports x86_64 hosts for now"
#endif

namespace dprobe::arch {

#if defined(__x86_64__)
using SavedRegs = x86_64::SavedRegs;
using MemoryAccess = x86_64::MemoryAccess;
inline constexpr uint16_t kIpSlot = x86_64::kIp;

// A decoded, classified probed instruction.
struct ProbeInsn {
  x86_64::Insn insn;
  x86_64::Classified cls;
};
#endif

enum class PrepareStatus : uint8_t { kOk, kNotBoundary, kRejected };

struct PrepareError {
  PrepareStatus status;
  std::string message;  // the reason; for kNotBoundary, then the listing
};

// Decodes from the function's start (when its bytes are known) to check the
// probe is on an instruction boundary, then decodes and classifies the
// probed instruction. `code` starts at `code_address` and must reach past
// the probed instruction.
Result<ProbeInsn, PrepareError> prepare_insn(std::span<const uint8_t> code, uint64_t code_address,
                                             uint64_t probe_address);

// The bytes of an out-of-line slot: the instruction (relocated) and a jump
// back. Emulated instructions get one too, run only when their emulation
// faults, so that the program gets the fault the instruction would raise.
inline constexpr size_t kSlotBytes = 32;
Result<size_t, std::string> write_slot(const ProbeInsn& insn, uint64_t slot_address,
                                       std::span<uint8_t> out);

std::span<const uint8_t> breakpoint_insn();
// The probe address of a breakpoint trap, from the trap's pc.
uint64_t probe_address_of_trap(uint64_t trap_pc);

// After the handlers ran: makes regs continue the program, in the slot or
// past an emulated instruction. noexcept and allocation-free: runs in a
// signal handler.
void resume_after_hit(const ProbeInsn& insn, uint64_t slot_address, SavedRegs& regs,
                      MemoryAccess& memory) noexcept;

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_PROBE_INSN_H_
