// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The arm64 probe layer: which addresses and words may be probed, the
// out-of-line slot's words (read back through decode_insn where they are
// PC-relative), and where a hit goes on. Words are the A64 encodings as
// aarch64-linux-gnu-as emits them; the comment is the source line.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "arch/arm64/decode.h"
#include "arch/arm64/probe.h"
#include "unit/arch/arm64_fakes.h"

namespace dprobe::arch::arm64 {
namespace {

constexpr uint64_t kCode = 0x400000;
constexpr uint64_t kSlot = 0x500000;

constexpr uint32_t kAddX0X1 = 0x91000420;     // add x0, x1, #1
constexpr uint32_t kBPlus8 = 0x14000002;      // b .+8
constexpr uint32_t kLdrX2Lit = 0x58000082;    // ldr x2, .+16
constexpr uint32_t kLdrW3Lit = 0x18000043;    // ldr w3, .+8
constexpr uint32_t kLdrswX4Lit = 0x98000064;  // ldrsw x4, .+12
constexpr uint32_t kLdrXzrLit = 0x5800005f;   // ldr xzr, .+8
constexpr uint32_t kLdxr = 0xc85f7c20;        // ldxr x0, [x1]
constexpr uint32_t kStxr = 0xc8027c20;        // stxr w2, x0, [x1]
constexpr uint32_t kBrk0 = 0xd4200000;        // brk #0
constexpr uint32_t kNop = 0xd503201f;         // nop

std::vector<uint8_t> bytes_of(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  }
  return out;
}

uint32_t word_at(const std::array<uint8_t, kSlotBytes>& slot, size_t at) {
  return uint32_t{slot[at]} | uint32_t{slot[at + 1]} << 8 | uint32_t{slot[at + 2]} << 16 |
         uint32_t{slot[at + 3]} << 24;
}

ProbeInsn prepared(uint32_t word) {
  const std::vector<uint8_t> code = bytes_of({word});
  auto insn = prepare_probe(code, kCode, kCode);
  EXPECT_TRUE(insn) << insn.error().message;
  return insn ? *insn : ProbeInsn{};
}

TEST(Arm64Probe, TheBreakpointIsBrkWithDprobesImmediate) {
  EXPECT_EQ(kBreakpointWord, 0xd42c8e00u);  // brk #0x6470
  const Decoded d = decode_insn(kBreakpointWord);
  EXPECT_FALSE(can_probe(d)) << "a probe on our own breakpoint must be refused";
}

TEST(Arm64Probe, AMisalignedAddressIsNotAnInstructionBoundary) {
  const std::vector<uint8_t> code = bytes_of({kNop, kAddX0X1});
  auto insn = prepare_probe(code, kCode, kCode + 2);
  ASSERT_FALSE(insn);
  EXPECT_EQ(insn.error().status, ArmStatus::kNotBoundary);
  // The instruction it is inside of, marked as x86_64's listing marks it.
  EXPECT_EQ(insn.error().message,
            "the address is inside an instruction (EILSEQ):\n"
            "> 0x400000: d503201f  <- probe at +0x2");
}

TEST(Arm64Probe, AnAddressPastTheCodeIsRefused) {
  const std::vector<uint8_t> code = bytes_of({kNop});
  auto insn = prepare_probe(code, kCode, kCode + 4);
  ASSERT_FALSE(insn);
  EXPECT_EQ(insn.error().status, ArmStatus::kNotBoundary);
}

TEST(Arm64Probe, ExceptionGeneratingInstructionsAreRejectedWithTheWord) {
  const std::vector<uint8_t> code = bytes_of({kBrk0});
  auto insn = prepare_probe(code, kCode, kCode);
  ASSERT_FALSE(insn);
  EXPECT_EQ(insn.error().status, ArmStatus::kRejected);
  EXPECT_NE(insn.error().message.find("0x400000: d4200000"), std::string::npos)
      << insn.error().message;
}

TEST(Arm64Probe, ALiteralLoadIntoXzrIsRejected) {
  const std::vector<uint8_t> code = bytes_of({kLdrXzrLit});
  auto insn = prepare_probe(code, kCode, kCode);
  ASSERT_FALSE(insn);
  EXPECT_EQ(insn.error().status, ArmStatus::kRejected);
}

TEST(Arm64Probe, AProbeInsideAnExclusiveSequenceIsRejected) {
  const std::vector<uint8_t> code = bytes_of({kLdxr, kAddX0X1, kStxr, kAddX0X1});
  auto inside = prepare_probe(code, kCode, kCode + 4);
  ASSERT_FALSE(inside);
  EXPECT_EQ(inside.error().status, ArmStatus::kRejected);
  EXPECT_NE(inside.error().message.find("exclusive"), std::string::npos);
  // After the store-exclusive the sequence is closed.
  EXPECT_TRUE(prepare_probe(code, kCode, kCode + 12));
  // Without the words before it (code from the probe on), nothing to scan.
  EXPECT_TRUE(prepare_probe(std::span(code).subspan(4), kCode + 4, kCode + 4));
}

TEST(Arm64Probe, AnOrdinaryInstructionStepsOutOfLineAndBranchesBack) {
  const ProbeInsn insn = prepared(kAddX0X1);
  ASSERT_EQ(insn.decoded.cls, InsnClass::kOutOfLine);
  std::array<uint8_t, kSlotBytes> slot{};
  auto written = write_slot(insn, kSlot, slot);
  ASSERT_TRUE(written) << written.error();
  EXPECT_EQ(*written, 8u);
  EXPECT_EQ(word_at(slot, 0), kAddX0X1);
  const Decoded back = decode_insn(word_at(slot, 4));
  EXPECT_EQ(back.op, Op::kB);
  EXPECT_EQ(kSlot + 4 + static_cast<uint64_t>(back.offset), kCode + 4);

  FakeMemory memory;
  SavedRegs regs = registers_at(kCode);
  resume_after_hit(insn, kSlot, regs, memory);
  EXPECT_EQ(regs.slot[kPc], kSlot);
  EXPECT_EQ(regs.slot[0], 0x1111111100000000u) << "stepping is the slot's job";
}

TEST(Arm64Probe, ABranchIsSimulatedWhereItStands) {
  const ProbeInsn insn = prepared(kBPlus8);
  ASSERT_EQ(insn.decoded.cls, InsnClass::kSimulate);
  FakeMemory memory;
  SavedRegs regs = registers_at(kCode);
  resume_after_hit(insn, kSlot, regs, memory);
  EXPECT_EQ(regs.slot[kPc], kCode + 8);
}

TEST(Arm64Probe, ALiteralLoadIsSimulatedFromTheProbesAddress) {
  const ProbeInsn insn = prepared(kLdrX2Lit);
  FakeMemory memory;
  memory.put(kCode + 16, 0x0123456789abcdefu, 8);
  SavedRegs regs = registers_at(kCode);
  resume_after_hit(insn, kSlot, regs, memory);
  EXPECT_EQ(regs.slot[2], 0x0123456789abcdefu);
  EXPECT_EQ(regs.slot[kPc], kCode + 4);
}

TEST(Arm64Probe, ALiteralLoadThatFaultsGoesToItsSlotWhichLoadsTheSameAddress) {
  for (const uint32_t word : {kLdrX2Lit, kLdrW3Lit, kLdrswX4Lit}) {
    const ProbeInsn insn = prepared(word);
    const uint32_t rt = insn.decoded.reg;
    std::array<uint8_t, kSlotBytes> slot{};
    auto written = write_slot(insn, kSlot, slot);
    ASSERT_TRUE(written) << written.error();
    EXPECT_EQ(*written, 24u);
    // LDR Xt, slot+16: the literal's absolute address, kept at slot+16.
    const Decoded first = decode_insn(word_at(slot, 0));
    EXPECT_EQ(first.op, Op::kLdrLiteral);
    EXPECT_TRUE(first.wide);
    EXPECT_EQ(first.reg, rt);
    EXPECT_EQ(first.offset, 16);
    uint64_t literal = 0;
    for (int i = 7; i >= 0; --i) literal = literal << 8 | slot[16 + static_cast<size_t>(i)];
    EXPECT_EQ(literal, kCode + static_cast<uint64_t>(insn.decoded.offset));
    // The load itself, from [Xt] with the instruction's size and extension.
    const uint32_t expected_load = word == kLdrswX4Lit ? 0xb9800000u
                                   : insn.decoded.wide ? 0xf9400000u
                                                       : 0xb9400000u;
    EXPECT_EQ(word_at(slot, 4), expected_load | rt << 5 | rt) << std::hex << word;
    const Decoded back = decode_insn(word_at(slot, 8));
    EXPECT_EQ(back.op, Op::kB);
    EXPECT_EQ(kSlot + 8 + static_cast<uint64_t>(back.offset), kCode + 4);

    FakeMemory unmapped;
    SavedRegs regs = registers_at(kCode);
    resume_after_hit(insn, kSlot, regs, unmapped);
    EXPECT_EQ(regs.slot[kPc], kSlot);
    EXPECT_EQ(regs.slot[rt], 0x1111111100000000u + rt) << "a failed read changes nothing";
  }
}

TEST(Arm64Probe, ASlotOutOfABranchsReachIsRefused) {
  const ProbeInsn insn = prepared(kAddX0X1);
  std::array<uint8_t, kSlotBytes> slot{};
  EXPECT_FALSE(write_slot(insn, kCode + (uint64_t{129} << 20), slot));
  EXPECT_FALSE(write_slot(insn, kCode - (uint64_t{129} << 20), slot));
  EXPECT_TRUE(write_slot(insn, kCode + kSlotReach, slot));
  EXPECT_TRUE(write_slot(insn, kCode - kSlotReach, slot));
}

}  // namespace
}  // namespace dprobe::arch::arm64
