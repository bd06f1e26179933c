// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A loaded object's .eh_frame_hdr (PT_GNU_EH_FRAME) as the stack unwinder
// reads it on a probe hit: the sorted search table of its FDEs, read in
// place through fault-safe reads (LSB, "DWARF Extensions").
//
//   if (auto object = describe_object(text_begin, text_end, hdr, safe_unwind_memory()))
//     uint64_t fde = find_fde(*object, pc, safe_unwind_memory());
#ifndef DPROBE_CORE_EH_FRAME_HDR_H_
#define DPROBE_CORE_EH_FRAME_HDR_H_

#include <cstdint>
#include <optional>

#include "core/hit/unwind_memory.h"

namespace dprobe::core {

// One object as the unwinder needs it.
struct UnwindObject {
  uint64_t text_begin = 0;  // [text_begin, text_end): its executable segments
  uint64_t text_end = 0;
  uint64_t eh_frame_hdr = 0;  // where .eh_frame_hdr is mapped
  uint64_t table = 0;         // its search table: (initial location, FDE) pairs
  uint64_t fde_count = 0;

  bool operator==(const UnwindObject&) const = default;
};

// The object whose .eh_frame_hdr is mapped at `eh_frame_hdr`, if that header
// has the sorted search table every linker writes (version 1, entries of
// two datarel sdata4 words); nullopt otherwise: an object the unwinder stops
// at.
std::optional<UnwindObject> describe_object(uint64_t text_begin, uint64_t text_end,
                                            uint64_t eh_frame_hdr, UnwindMemory memory) noexcept;

// The FDE that may cover `pc` (the one with the greatest initial location
// not above it), by binary search of the object's table; 0 when `pc` is
// below every FDE or the table cannot be read. The caller checks the FDE's
// range: functions without unwind information leave gaps.
uint64_t find_fde(const UnwindObject& object, uint64_t pc, UnwindMemory memory) noexcept;

}  // namespace dprobe::core

#endif  // DPROBE_CORE_EH_FRAME_HDR_H_
