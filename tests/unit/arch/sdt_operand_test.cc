// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The SDT operands compilers write (gcc's and clang's on x86_64 and
// arm64, as readelf -n shows them on Debian's python3.11, libstdc++,
// libjvm and our own test programs), and the ones no fetch can read.
#include "arch/sdt_operand.h"

#include <gtest/gtest.h>

namespace dprobe::arch {
namespace {

using Kind = SdtOperand::Kind;

SdtOperand parse_ok(Isa isa, std::string_view text) {
  auto operand = parse_sdt_operand(isa, text);
  EXPECT_TRUE(operand) << text << ": " << (operand ? "" : operand.error().message);
  return operand ? *operand : SdtOperand{};
}

uint16_t slot(Isa isa, std::string_view name) { return *register_index(isa, name); }

TEST(SdtOperand, X86RegistersOfEveryWidthAreTheirFullRegister) {
  constexpr Isa x86 = Isa::kX86_64;
  const struct {
    std::string_view text;
    std::string_view reg;
    uint8_t size;
    bool is_signed;
  } cases[] = {
      {"-4@%eax", "ax", 4, true}, {"8@%rbx", "bx", 8, false}, {"-8@%r12", "r12", 8, true},
      {"-1@%r8b", "r8", 1, true}, {"2@%r9w", "r9", 2, false}, {"-4@%r15d", "r15", 4, true},
      {"1@%al", "ax", 1, false},  {"-1@%dil", "di", 1, true}, {"8@%rbp", "bp", 8, false},
      {"-2@%si", "si", 2, true},  {"4@%esp", "sp", 4, false},
  };
  for (const auto& c : cases) {
    const SdtOperand op = parse_ok(x86, c.text);
    EXPECT_EQ(op.kind, Kind::kRegister) << c.text;
    EXPECT_EQ(op.reg, slot(x86, c.reg)) << c.text;
    EXPECT_EQ(op.size, c.size) << c.text;
    EXPECT_EQ(op.is_signed, c.is_signed) << c.text;
  }
}

TEST(SdtOperand, X86MemoryConstantsAndVariables) {
  constexpr Isa x86 = Isa::kX86_64;
  SdtOperand op = parse_ok(x86, "-8@-16(%rbp)");
  EXPECT_EQ(op.kind, Kind::kMemory);
  EXPECT_EQ(op.reg, slot(x86, "bp"));
  EXPECT_EQ(op.offset, -16);
  op = parse_ok(x86, "-4@112(%rsp)");
  EXPECT_EQ(op.reg, slot(x86, "sp"));
  EXPECT_EQ(op.offset, 112);
  op = parse_ok(x86, "8@(%rdi)");
  EXPECT_EQ(op.kind, Kind::kMemory);
  EXPECT_EQ(op.offset, 0);
  op = parse_ok(x86, "-4@$42");
  EXPECT_EQ(op.kind, Kind::kImmediate);
  EXPECT_EQ(op.offset, 42);
  EXPECT_EQ(parse_ok(x86, "-4@$-7").offset, -7);
  op = parse_ok(x86, "-8@fix_counter(%rip)");
  EXPECT_EQ(op.kind, Kind::kSymbol);
  EXPECT_EQ(op.symbol, "fix_counter");
  EXPECT_EQ(op.offset, 0);
  op = parse_ok(x86, "4@table+8(%rip)");
  EXPECT_EQ(op.symbol, "table");
  EXPECT_EQ(op.offset, 8);
  EXPECT_EQ(parse_ok(x86, "4@table-4(%rip)").offset, -4);
}

TEST(SdtOperand, AnOperandWithoutSizeIsALong) {
  const SdtOperand op = parse_ok(Isa::kX86_64, "%rax");
  EXPECT_EQ(op.size, 8);
  EXPECT_FALSE(op.is_signed);
}

TEST(SdtOperand, Arm64RegistersMemoryAndConstants) {
  constexpr Isa arm = Isa::kArm64;
  SdtOperand op = parse_ok(arm, "-4@w0");
  EXPECT_EQ(op.kind, Kind::kRegister);
  EXPECT_EQ(op.reg, slot(arm, "x0"));
  EXPECT_EQ(op.size, 4);
  EXPECT_EQ(parse_ok(arm, "8@x19").reg, slot(arm, "x19"));
  EXPECT_EQ(parse_ok(arm, "8@sp").reg, slot(arm, "sp"));
  op = parse_ok(arm, "8@[sp, 16]");
  EXPECT_EQ(op.kind, Kind::kMemory);
  EXPECT_EQ(op.reg, slot(arm, "sp"));
  EXPECT_EQ(op.offset, 16);
  op = parse_ok(arm, "-8@[x29, -8]");
  EXPECT_EQ(op.reg, slot(arm, "x29"));
  EXPECT_EQ(op.offset, -8);
  EXPECT_EQ(parse_ok(arm, "8@[x1]").offset, 0);
  EXPECT_EQ(parse_ok(arm, "8@[sp, #24]").offset, 24);
  op = parse_ok(arm, "-4@42");
  EXPECT_EQ(op.kind, Kind::kImmediate);
  EXPECT_EQ(op.offset, 42);
  EXPECT_EQ(parse_ok(arm, "-4@#-3").offset, -3);
}

TEST(SdtOperand, RefusesWhatNoFetchCanRead) {
  for (std::string_view text : {"8@(%rax,%rbx,8)", "1@%ah", "3@%eax", "16@%rax", "8@%xmm0",
                                "8@0x10(%rip)", "8@-16(%eax)", "8@foo", "x@%rax"}) {
    EXPECT_FALSE(parse_sdt_operand(Isa::kX86_64, text)) << text;
  }
  for (std::string_view text : {"8@[sp", "8@v0", "8@[x1, y]", "8@q", "-8@[x3, #:lo12:.LANCHOR1]"}) {
    EXPECT_FALSE(parse_sdt_operand(Isa::kArm64, text)) << text;
  }
}

TEST(SdtOperand, SplitsAsTheNoteSeparates) {
  EXPECT_EQ(split_sdt_operands("8@%rbx 8@%r15"),
            (std::vector<std::string_view>{"8@%rbx", "8@%r15"}));
  EXPECT_EQ(split_sdt_operands("8@[sp, 16] -4@w0"),
            (std::vector<std::string_view>{"8@[sp, 16]", "-4@w0"}));
  EXPECT_TRUE(split_sdt_operands("").empty());
}

}  // namespace
}  // namespace dprobe::arch
