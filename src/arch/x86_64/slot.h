// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The out-of-line copy of a displaced instruction (the kernel's XOL slot):
// the instruction, its RIP-relative disp32 retargeted so it still refers to
// the same absolute address from the slot, then a jump back to the
// instruction that followed it.
//
//   std::array<uint8_t, kSlotSize> bytes;
//   auto n = write_out_of_line_slot(insn, classify_insn(insn), slot_address, bytes);
//   if (!n) return error(n.error());  // e.g. the data is beyond disp32 reach
//   copy_to_slot(slot_address, bytes.data(), *n);
#ifndef DPROBE_ARCH_X86_64_SLOT_H_
#define DPROBE_ARCH_X86_64_SLOT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "arch/x86_64/classify.h"
#include "arch/x86_64/decoder.h"
#include "base/result.h"

namespace dprobe::arch::x86_64 {

// Room for the longest instruction (15) and the far jump back (14).
inline constexpr size_t kSlotSize = 32;

// Writes the slot's bytes, as they must be at `slot_address`, into `out`
// and returns how many it wrote. Only for InsnClass::kOutOfLine.
Result<size_t, std::string> write_out_of_line_slot(const Insn& insn, const Classified& c,
                                                   uint64_t slot_address, std::span<uint8_t> out);

}  // namespace dprobe::arch::x86_64

#endif  // DPROBE_ARCH_X86_64_SLOT_H_
