// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The registers the stack unwinder follows from frame to frame, by DWARF
// column: which columns and the SavedRegs slot of each are the host ISA's
// (arch/probe_insn.h); the rest of the unwinder is DWARF, the same for any
// ISA.
#ifndef DPROBE_CORE_UNWIND_REGISTERS_H_
#define DPROBE_CORE_UNWIND_REGISTERS_H_

#include <cstdint>

#include "arch/probe_insn.h"

namespace dprobe::core::unwinding {

inline constexpr uint32_t kColumns = arch::kDwarfColumns;
inline constexpr uint32_t kSpColumn = arch::kDwarfSpColumn;
inline constexpr uint32_t kFpColumn = arch::kDwarfFpColumn;
inline constexpr uint32_t kRaColumn = arch::kDwarfRaColumn;
inline constexpr auto kSlotOfColumn = arch::kSlotOfDwarfColumn;

// The registers of one frame, by DWARF column.
struct Registers {
  uint64_t value[kColumns];  // not initialized: see copy_words (core/word_copy.h)
  uint64_t known = 0;        // bit c: value[c] is known

  bool has(uint64_t column) const { return column < kColumns && ((known >> column) & 1) != 0; }
  void set(uint64_t column, uint64_t v) {
    value[column] = v;
    known |= uint64_t{1} << column;
  }
};

}  // namespace dprobe::core::unwinding

#endif  // DPROBE_CORE_UNWIND_REGISTERS_H_
