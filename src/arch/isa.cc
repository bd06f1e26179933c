// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/isa.h"

#include <array>

#include "arch/arm64/regs.h"
#include "arch/x86_64/regs.h"

namespace dprobe::arch {
namespace {

template <size_t N>
std::optional<uint16_t> find_name(const std::array<std::string_view, N>& names,
                                  std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<uint16_t>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view isa_name(Isa isa) { return isa == Isa::kX86_64 ? "x86_64" : "arm64"; }

std::optional<uint16_t> register_index(Isa isa, std::string_view name) {
  if (isa == Isa::kX86_64) return find_name(x86_64::kRegisterNames, name);
  return find_name(arm64::kRegisterNames, name);
}

std::string_view register_name(Isa isa, uint16_t index) {
  if (isa == Isa::kX86_64) {
    return index < x86_64::kRegisterNames.size() ? x86_64::kRegisterNames[index] : "";
  }
  return index < arm64::kRegisterNames.size() ? arm64::kRegisterNames[index] : "";
}

std::string_view dwarf_register_name(Isa isa, unsigned regno) {
  if (isa == Isa::kX86_64) {
    // System V AMD64 psABI, figure 3.36: the general registers 0..15.
    static constexpr std::array<std::string_view, 16> kDwarfNames = {
        "ax", "dx", "cx",  "bx",  "si",  "di",  "bp",  "sp",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};
    return regno < kDwarfNames.size() ? kDwarfNames[regno] : "";
  }
  // AAPCS64 DWARF: x0..x30 are 0..30, sp is 31.
  return regno <= 31 ? arm64::kRegisterNames[regno] : "";
}

}  // namespace dprobe::arch
