// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The instruction sets dprobe knows, and the register names the probe
// language accepts for each (the kernel's regs_query_register_offset names).
// Pure data: built and tested on every host whatever its own ISA.
//
//   auto index = register_index(Isa::kX86_64, "di");  // -> saved-frame slot
#ifndef DPROBE_ARCH_ISA_H_
#define DPROBE_ARCH_ISA_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "arch/arm64/regs.h"
#include "arch/x86_64/regs.h"

namespace dprobe::arch {

enum class Isa : uint8_t { kX86_64, kArm64 };

// The ISA this binary was built for.
constexpr Isa host_isa() {
#if defined(__x86_64__)
  return Isa::kX86_64;
#elif defined(__aarch64__)
  return Isa::kArm64;
#else
#error "dprobe supports x86_64 and arm64 hosts"
#endif
}
std::string_view isa_name(Isa isa);

// The saved register frame of each ISA: how many slots, and the slots of
// the stack pointer and of the return value (the kernel's
// regs_return_value). Inline: the fetch programs read them on every hit.
constexpr uint16_t register_count(Isa isa) {
  if (isa == Isa::kX86_64) return x86_64::kRegCount;
  return arm64::kRegCount;
}
constexpr uint16_t stack_pointer_slot(Isa isa) {
  if (isa == Isa::kX86_64) return x86_64::kSp;
  return arm64::kSp;
}
constexpr uint16_t return_value_slot(Isa isa) {
  if (isa == Isa::kX86_64) return x86_64::kAx;
  return arm64::kX0;
}

// Slot of a named register in the ISA's saved register frame (the agent's
// equivalent of pt_regs), or nullopt for a name the ISA does not have.
std::optional<uint16_t> register_index(Isa isa, std::string_view name);
// The language name of a slot; empty for a slot out of range.
std::string_view register_name(Isa isa, uint16_t index);

// The language name of DWARF register `regno` (the psABI's numbering:
// 5 is rdi on x86_64, 31 is sp on arm64); empty for one the language has
// no name for (vector registers, the return-address column).
std::string_view dwarf_register_name(Isa isa, unsigned regno);

// Where the calling convention puts integer argument N (1-based) at function
// entry: in a register slot, or in a stack slot counted in 8-byte words from
// the stack pointer.
struct ArgLocation {
  bool in_register;
  uint16_t index;  // register slot, or stack word
};
constexpr ArgLocation argument_location(Isa isa, unsigned n) {
  if (isa == Isa::kX86_64) {
    // System V AMD64: rdi, rsi, rdx, rcx, r8, r9, then the stack above the
    // return address, so argument 7 is the word at sp + 8.
    if (n >= 1 && n <= x86_64::kArgRegisters.size()) {
      return {true, static_cast<uint16_t>(x86_64::kArgRegisters[n - 1])};
    }
    return {false, static_cast<uint16_t>(n - x86_64::kArgRegisters.size())};
  }
  // AAPCS64: x0..x7, then the stack from sp (the return address is in lr).
  if (n >= 1 && n <= 8) return {true, static_cast<uint16_t>(arm64::kX0 + n - 1)};
  return {false, static_cast<uint16_t>(n - 9)};
}

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_ISA_H_
