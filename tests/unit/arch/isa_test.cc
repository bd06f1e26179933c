// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/isa.h"

#include <gtest/gtest.h>

#include "arch/arm64/regs.h"
#include "arch/x86_64/regs.h"

namespace dprobe::arch {
namespace {

TEST(Registers, X86NamesAreTheKernels) {
  EXPECT_EQ(register_index(Isa::kX86_64, "di"), x86_64::kDi);
  EXPECT_EQ(register_index(Isa::kX86_64, "r15"), x86_64::kR15);
  EXPECT_EQ(register_index(Isa::kX86_64, "orig_ax"), x86_64::kOrigAx);
  EXPECT_FALSE(register_index(Isa::kX86_64, "rdi"));
  EXPECT_FALSE(register_index(Isa::kX86_64, "x0"));
  for (uint16_t i = 0; i < x86_64::kRegCount; ++i) {
    EXPECT_EQ(register_index(Isa::kX86_64, register_name(Isa::kX86_64, i)), i);
  }
  EXPECT_EQ(register_name(Isa::kX86_64, x86_64::kRegCount), "");
}

TEST(Registers, Arm64NamesAreTheKernels) {
  EXPECT_EQ(register_index(Isa::kArm64, "x0"), 0);
  EXPECT_EQ(register_index(Isa::kArm64, "x30"), arm64::kLr);
  EXPECT_EQ(register_index(Isa::kArm64, "sp"), arm64::kSp);
  EXPECT_EQ(register_index(Isa::kArm64, "pc"), arm64::kPc);
  EXPECT_EQ(register_index(Isa::kArm64, "pstate"), arm64::kPstate);
  EXPECT_FALSE(register_index(Isa::kArm64, "x31"));
  EXPECT_FALSE(register_index(Isa::kArm64, "di"));
}

TEST(Arguments, SystemVAmd64) {
  const uint16_t expected[] = {x86_64::kDi, x86_64::kSi, x86_64::kDx,
                               x86_64::kCx, x86_64::kR8, x86_64::kR9};
  for (unsigned n = 1; n <= 6; ++n) {
    const ArgLocation loc = argument_location(Isa::kX86_64, n);
    EXPECT_TRUE(loc.in_register);
    EXPECT_EQ(loc.index, expected[n - 1]);
  }
  // Argument 7 is above the return address.
  EXPECT_FALSE(argument_location(Isa::kX86_64, 7).in_register);
  EXPECT_EQ(argument_location(Isa::kX86_64, 7).index, 1);
  EXPECT_EQ(argument_location(Isa::kX86_64, 9).index, 3);
}

TEST(Arguments, Aapcs64) {
  for (unsigned n = 1; n <= 8; ++n) {
    EXPECT_TRUE(argument_location(Isa::kArm64, n).in_register);
    EXPECT_EQ(argument_location(Isa::kArm64, n).index, n - 1);
  }
  // Argument 9 is the first word at sp: there is no return address there.
  EXPECT_FALSE(argument_location(Isa::kArm64, 9).in_register);
  EXPECT_EQ(argument_location(Isa::kArm64, 9).index, 0);
}

}  // namespace
}  // namespace dprobe::arch

namespace dprobe::arch {
namespace {

// The psABIs' DWARF numbering, which is not the frame's order.
TEST(DwarfRegisters, X86NumberingIsThePsAbis) {
  EXPECT_EQ(dwarf_register_name(Isa::kX86_64, 0), "ax");
  EXPECT_EQ(dwarf_register_name(Isa::kX86_64, 1), "dx");
  EXPECT_EQ(dwarf_register_name(Isa::kX86_64, 3), "bx");
  EXPECT_EQ(dwarf_register_name(Isa::kX86_64, 5), "di");
  EXPECT_EQ(dwarf_register_name(Isa::kX86_64, 6), "bp");
  EXPECT_EQ(dwarf_register_name(Isa::kX86_64, 7), "sp");
  EXPECT_EQ(dwarf_register_name(Isa::kX86_64, 15), "r15");
  EXPECT_EQ(dwarf_register_name(Isa::kX86_64, 16), "");  // the return address column
  EXPECT_EQ(dwarf_register_name(Isa::kX86_64, 17), "");  // xmm0
}

TEST(DwarfRegisters, Arm64NumberingIsThePsAbis) {
  EXPECT_EQ(dwarf_register_name(Isa::kArm64, 0), "x0");
  EXPECT_EQ(dwarf_register_name(Isa::kArm64, 29), "x29");
  EXPECT_EQ(dwarf_register_name(Isa::kArm64, 31), "sp");
  EXPECT_EQ(dwarf_register_name(Isa::kArm64, 64), "");  // v0
}

}  // namespace
}  // namespace dprobe::arch
