// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The arm64 engine's view of one probed instruction (the kernel's
// arch_prepare_kprobe, arch_prepare_ss_slot and the simulate path of
// kprobe_handler, for user space): the breakpoint word, the checks before
// a probe is armed, the out-of-line slot's words, and how a hit goes on.
// Pure functions over instruction words, built and tested on every host.
//
//   auto insn = prepare_probe(code, code_address, probe_address);
//   write_slot(*insn, slot_address, slot_bytes);     // within kSlotReach
//   ... on a hit, regs.slot[kPc] == probe_address:
//   resume_after_hit(*insn, slot_address, regs, memory);
//
// The breakpoint is BRK #0x6470 ("dp"): not the kernel's uprobe (#0x005)
// or kprobe (#0x004) immediates, nor the #0 debuggers write or the #0x3e8
// of __builtin_trap, so that a trap the agent did not plant is told apart
// by the word at the pc as well as by the registry.
#ifndef DPROBE_ARCH_ARM64_PROBE_H_
#define DPROBE_ARCH_ARM64_PROBE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "arch/arm64/decode.h"
#include "arch/arm64/regs.h"
#include "arch/memory_access.h"
#include "arch/refusal.h"
#include "base/result.h"

namespace dprobe::arch::arm64 {

inline constexpr uint16_t kBreakpointImm = 0x6470;
inline constexpr uint32_t kBreakpointWord = 0xd4200000u | (uint32_t{kBreakpointImm} << 5);
inline constexpr size_t kInsnBytes = 4;

// A slot must be reachable by B both ways: ±128 MiB, less the margin of a
// whole slot page (core's allocator measures from a page's start, and its
// pages are 64 KiB).
inline constexpr uint64_t kSlotReach = (uint64_t{128} << 20) - (uint64_t{128} << 10);
// A slot's words: at most the literal-load sequence (write_slot).
inline constexpr size_t kSlotBytes = 32;

struct ProbeInsn {
  uint64_t address = 0;
  uint32_t word = 0;
  Decoded decoded;
};

// Checks the probe is a 4-byte aligned instruction inside `code` (which
// starts at `code_address`; from the function's start when it is known,
// so that the exclusive-sequence scan sees the words before), decodes and
// classifies it. kNotBoundary for a misaligned or outside address,
// kRejected with the reason for an instruction that cannot be probed.
Result<ProbeInsn, Refusal> prepare_probe(std::span<const uint8_t> code, uint64_t code_address,
                                         uint64_t probe_address);

// The slot's words at `slot_address`:
//   stepped out of line:  the instruction, then B back to address + 4;
//   a literal load:       what reproduces its fault (resume_after_hit goes
//                         there only when the simulated read failed):
//                           LDR Xt, slot+16;  LDR{,SW} Xt|Wt, [Xt];
//                           B address + 4;    (pad);  .quad literal address
//   other simulated ones: B address + 4 (never run).
// An error when the slot is out of B's reach of the probe.
Result<size_t, std::string> write_slot(const ProbeInsn& insn, uint64_t slot_address,
                                       std::span<uint8_t> out);

// After the handlers ran, with regs' pc at the probed address: simulates
// the instruction, or sends the thread to its slot (stepped out of line,
// or a simulated read that faulted: the program gets the fault from the
// slot's load, at the same data address).
void resume_after_hit(const ProbeInsn& insn, uint64_t slot_address, SavedRegs& regs,
                      MemoryAccess& memory) noexcept;

// The load a literal load (LDR Wt/Xt, LDRSW) makes, as LDR{,SW} from
// [Xn] into its own Rt: the slot's and the trampoline's second word.
uint32_t literal_load_from(const Decoded& d, uint32_t rn);

}  // namespace dprobe::arch::arm64

#endif  // DPROBE_ARCH_ARM64_PROBE_H_
