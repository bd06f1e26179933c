// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The registers the stack unwinder follows from frame to frame, by DWARF
// column. The ISA, in one place: the x86_64 psABI's DWARF register numbers
// (rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then the return address) and
// the SavedRegs slot of each. The rest of the unwinder is DWARF, the same
// for any ISA.
#ifndef DPROBE_CORE_UNWIND_REGISTERS_H_
#define DPROBE_CORE_UNWIND_REGISTERS_H_

#include <cstdint>

#include "arch/probe_insn.h"

namespace dprobe::core::unwinding {

inline constexpr uint32_t kColumns = 17;
inline constexpr uint32_t kSpColumn = 7;
inline constexpr uint16_t kSlotOfColumn[kColumns] = {
    arch::x86_64::kAx,  arch::x86_64::kDx,  arch::x86_64::kCx,  arch::x86_64::kBx,
    arch::x86_64::kSi,  arch::x86_64::kDi,  arch::x86_64::kBp,  arch::x86_64::kSp,
    arch::x86_64::kR8,  arch::x86_64::kR9,  arch::x86_64::kR10, arch::x86_64::kR11,
    arch::x86_64::kR12, arch::x86_64::kR13, arch::x86_64::kR14, arch::x86_64::kR15,
    arch::x86_64::kIp};

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
