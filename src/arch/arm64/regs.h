// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// arm64 saved register frame and register names (the kernel's arm64
// regoffset table: x0..x30, sp, pc, pstate).
#ifndef DPROBE_ARCH_ARM64_REGS_H_
#define DPROBE_ARCH_ARM64_REGS_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace dprobe::arch::arm64 {

// clang-format off
enum Reg : uint16_t { kX0 = 0, kLr = 30, kSp = 31, kPc = 32, kPstate = 33, kRegCount };
// clang-format on

inline constexpr std::array<std::string_view, kRegCount> kRegisterNames = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",    "x10", "x11",
    "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",   "x22", "x23",
    "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",  "pc",  "pstate"};

struct SavedRegs {
  uint64_t slot[kRegCount];
};

}  // namespace dprobe::arch::arm64

#endif  // DPROBE_ARCH_ARM64_REGS_H_
