// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Branch-optimized probes on arm64: which instructions may become a B, and
// the trampoline's words, read back through decode_insn where they are
// PC-relative (a branch's target, a literal's address) and through the
// literal they load. Words are the A64 encodings as aarch64-linux-gnu-as
// emits them; the comment is the source line.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "arch/arm64/decode.h"
#include "arch/arm64/optimize.h"
#include "arch/arm64/regs.h"

namespace dprobe::arch::arm64 {
namespace {

constexpr uint64_t kCode = 0x10000000;
constexpr uint64_t kTrampoline = 0x10400000;  // 4 MiB after the code

constexpr uint32_t kStpFp = 0xa9bf7bfd;     // stp x29, x30, [sp, #-16]!
constexpr uint32_t kBlrX1 = 0xd63f0020;     // blr x1
constexpr uint32_t kBeq = 0x54000200;       // b.eq .+0x40
constexpr uint32_t kTbnz = 0x37180103;      // tbnz w3, #3, .+0x20
constexpr uint32_t kBl = 0x94000400;        // bl .+0x1000
constexpr uint32_t kB = 0x17fffc00;         // b .-0x1000
constexpr uint32_t kAdrpX5 = 0xb0000005;    // adrp x5, .+0x1000 (page)
constexpr uint32_t kAdrX6 = 0x10000106;     // adr x6, .+0x20
constexpr uint32_t kLdrW7Lit = 0x18000107;  // ldr w7, .+0x20
constexpr uint32_t kLdrswX8 = 0x98000108;   // ldrsw x8, .+0x20
constexpr uint32_t kPrfm = 0xd8000100;      // prfm pldl1keep, .+0x20
constexpr uint32_t kRet = 0xd65f03c0;       // ret
constexpr uint32_t kBrX9 = 0xd61f0120;      // br x9

struct Trampoline {
  std::array<uint8_t, kTrampolineSize> bytes{};
  size_t size = 0;

  uint32_t word(size_t offset) const {
    return uint32_t{bytes[offset]} | uint32_t{bytes[offset + 1]} << 8 |
           uint32_t{bytes[offset + 2]} << 16 | uint32_t{bytes[offset + 3]} << 24;
  }
  uint64_t quad(size_t offset) const { return word(offset) | uint64_t{word(offset + 4)} << 32; }
  // The word at `offset` of the copy.
  uint32_t copy(size_t index) const { return word(displaced_copy_offset() + 4 * index); }
  // Where the PC-relative word at copy index `index` points.
  uint64_t target(size_t index) const {
    const size_t at = displaced_copy_offset() + 4 * index;
    return kTrampoline + at + static_cast<uint64_t>(decode_insn(word(at)).offset);
  }
  // The value the LDR (literal) at copy index `index` loads.
  uint64_t literal(size_t index) const { return quad(target(index) - kTrampoline); }
};

ProbeInsn insn_of(uint32_t word, uint64_t address = kCode) {
  return {address, word, decode_insn(word)};
}

Trampoline written(uint32_t word, uint64_t trampoline = kTrampoline, uint64_t address = kCode) {
  Trampoline t;
  auto plan = can_optimize(insn_of(word, address));
  EXPECT_TRUE(plan) << plan.error();
  if (!plan) return t;
  auto size = write_trampoline(*plan, {trampoline, 0x7f0000001000, 0xc00c1e}, t.bytes);
  EXPECT_TRUE(size) << size.error();
  t.size = size ? *size : 0;
  return t;
}

bool is_b(uint32_t word) { return (word & 0xfc000000u) == 0x14000000u; }

TEST(Arm64Optimize, TheSiteBranchReachesTheTrampoline) {
  const uint32_t word = site_branch(kCode, kTrampoline);
  EXPECT_TRUE(is_b(word));
  EXPECT_EQ(kCode + static_cast<uint64_t>(decode_insn(word).offset), kTrampoline);
  const uint32_t back = site_branch(kTrampoline, kCode);
  EXPECT_EQ(kTrampoline + static_cast<uint64_t>(decode_insn(back).offset), kCode);
}

TEST(Arm64Optimize, BlrStaysABreakpoint) {
  auto plan = can_optimize(insn_of(kBlrX1));
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().find("BLR"), std::string::npos) << plan.error();
}

TEST(Arm64Optimize, TheFrameIsSavedCalledAndRestored) {
  const Trampoline t = written(kStpFp);
  EXPECT_EQ(t.word(0), 0xd10443ffu);   // sub sp, sp, #0x110 (sizeof SavedRegs)
  EXPECT_EQ(t.word(4), 0xa90007e0u);   // stp x0, x1, [sp]
  EXPECT_EQ(t.word(60), 0xa90e77fcu);  // stp x28, x29, [sp, #224]
  EXPECT_EQ(t.word(64), 0xf9007bfeu);  // str x30, [sp, #240]
  // The call: mov x0, sp; ldr x1, =cookie; ldr x16, =handler; blr x16.
  size_t blr = 0;
  for (size_t at = 0; at < displaced_copy_offset(); at += 4) {
    if (t.word(at) == 0xd63f0200u) blr = at;  // blr x16
  }
  ASSERT_NE(blr, 0u);
  EXPECT_EQ(t.word(blr - 12), 0x910003e0u);  // mov x0, sp
  const auto literal_at = [&](size_t at) {
    return t.quad(at + static_cast<size_t>(decode_insn(t.word(at)).offset));
  };
  EXPECT_EQ(literal_at(blr - 8), 0xc00c1eu);        // x1: the cookie
  EXPECT_EQ(literal_at(blr - 4), 0x7f0000001000u);  // x16: the handler
  // The restore ends with ldr x30, [sp, #240]; add sp, sp, #0x110.
  EXPECT_EQ(t.word(displaced_copy_offset() - 8), 0xf9407bfeu);
  EXPECT_EQ(t.word(displaced_copy_offset() - 4), 0x910443ffu);
}

TEST(Arm64Optimize, ThePcSlotHoldsTheProbeAddress) {
  const Trampoline t = written(kStpFp);
  // ldr x1, =probe; stp x0, x1, [sp, #248] (sp and pc).
  for (size_t at = 4; at < displaced_copy_offset(); at += 4) {
    if (t.word(at) != 0xa90f87e0u) continue;  // stp x0, x1, [sp, #248]
    const uint32_t load = t.word(at - 4);
    EXPECT_EQ(t.quad(at - 4 + static_cast<size_t>(decode_insn(load).offset)), kCode);
    return;
  }
  ADD_FAILURE() << "no stp x0, x1, [sp, #248]";
}

TEST(Arm64Optimize, AnInstructionSteppedOutOfLineIsCopiedThenBranchesBack) {
  const Trampoline t = written(kStpFp);
  EXPECT_EQ(t.copy(0), kStpFp);
  EXPECT_TRUE(is_b(t.copy(1)));
  EXPECT_EQ(t.target(1), kCode + 4);
  EXPECT_LE(t.size, kTrampolineSize);
}

TEST(Arm64Optimize, AConditionalBranchTakesBothWaysFromTheTrampoline) {
  for (uint32_t word : {kBeq, kTbnz}) {
    const Trampoline t = written(word);
    const Decoded d = decode_insn(t.copy(0));
    EXPECT_EQ(d.op, decode_insn(word).op);
    EXPECT_EQ(d.offset, 8) << "taken: over the branch back";
    EXPECT_EQ(t.target(1), kCode + 4) << "not taken";
    EXPECT_EQ(t.target(2), kCode + static_cast<uint64_t>(decode_insn(word).offset)) << "taken";
  }
  EXPECT_EQ(decode_insn(written(kTbnz).copy(0)).bit, 3);
}

TEST(Arm64Optimize, BAndBlGoToTheirTargetBlLinkingToTheProbesNext) {
  const Trampoline b = written(kB);
  EXPECT_EQ(b.target(0), kCode - 0x1000);
  const Trampoline bl = written(kBl);
  EXPECT_EQ(bl.copy(0) & 0xffc0001fu, 0x5800001eu);  // ldr x30, =...
  EXPECT_EQ(bl.literal(0), kCode + 4);
  EXPECT_EQ(bl.target(1), kCode + 0x1000);
}

TEST(Arm64Optimize, ABranchOutOfReachGoesThroughX16) {
  // The trampoline 127 MiB below the code, the call's target 8 MiB above
  // it: 135 MiB from the trampoline.
  constexpr uint64_t kFarCode = 0x20000000;
  constexpr uint64_t kLowTrampoline = kFarCode - (uint64_t{127} << 20);
  constexpr uint32_t kBlFar = 0x94200000;  // bl .+0x800000
  const Trampoline t = written(kBlFar, kLowTrampoline, kFarCode);
  EXPECT_EQ(t.copy(0) & 0xffc0001fu, 0x5800001eu);  // ldr x30, =next
  EXPECT_EQ(t.copy(1) & 0xffc0001fu, 0x58000010u);  // ldr x16, =target
  EXPECT_EQ(t.copy(2), 0xd61f0200u);                // br x16
  const auto quad_at = [&](size_t index) {
    const size_t at = displaced_copy_offset() + 4 * index;
    return t.quad(at + static_cast<size_t>(decode_insn(t.word(at)).offset));
  };
  EXPECT_EQ(quad_at(0), kFarCode + 4);
  EXPECT_EQ(quad_at(1), kFarCode + 0x800000);
}

TEST(Arm64Optimize, AConditionalBranchOutOfReachStaysABreakpoint) {
  constexpr uint64_t kFarCode = 0x20000000;
  // 127.5 MiB below: the way back is in reach, the target 1 MiB above the
  // code is not.
  constexpr uint64_t kLowTrampoline = kFarCode - (uint64_t{255} << 19);
  constexpr uint32_t kCbzFar = 0xb47ffff0;  // cbz x16, .+0xffffc
  auto plan = can_optimize(insn_of(kCbzFar, kFarCode));
  ASSERT_TRUE(plan);
  std::array<uint8_t, kTrampolineSize> bytes{};
  auto size = write_trampoline(*plan, {kLowTrampoline, 1, 2}, bytes);
  ASSERT_FALSE(size);
  EXPECT_NE(size.error().find("reach"), std::string::npos) << size.error();
}

TEST(Arm64Optimize, ATrampolineOutOfReachIsRefused) {
  auto plan = can_optimize(insn_of(kStpFp));
  ASSERT_TRUE(plan);
  std::array<uint8_t, kTrampolineSize> bytes{};
  EXPECT_FALSE(write_trampoline(*plan, {kCode + (uint64_t{129} << 20), 1, 2}, bytes));
  EXPECT_FALSE(write_trampoline(*plan, {kTrampoline + 2, 1, 2}, bytes)) << "misaligned";
}

TEST(Arm64Optimize, AddressesAndLiteralLoadsBecomeLoadsOfTheirValues) {
  const Trampoline adrp = written(kAdrpX5, kTrampoline, kCode + 0x123 * 4);
  EXPECT_EQ(adrp.copy(0) & 0xff00001fu, 0x58000005u);  // ldr x5, =page
  EXPECT_EQ(adrp.literal(0), ((kCode + 0x123 * 4) & ~uint64_t{0xfff}) + 0x1000);
  EXPECT_EQ(adrp.target(1), kCode + 0x123 * 4 + 4);
  const Trampoline adr = written(kAdrX6);
  EXPECT_EQ(adr.literal(0), kCode + 0x20);
  const Trampoline ldr = written(kLdrW7Lit);
  EXPECT_EQ(ldr.copy(0) & 0xff00001fu, 0x58000007u);  // ldr x7, =address
  EXPECT_EQ(ldr.literal(0), kCode + 0x20);
  EXPECT_EQ(ldr.copy(1), 0xb94000e7u);  // ldr w7, [x7]
  const Trampoline ldrsw = written(kLdrswX8);
  EXPECT_EQ(ldrsw.copy(1), 0xb9800108u);  // ldrsw x8, [x8]
  const Trampoline prfm = written(kPrfm);
  EXPECT_EQ(prfm.target(0), kCode + 4) << "a prefetch does nothing";
}

TEST(Arm64Optimize, RetAndBrAreCopiedWithNoWayBack) {
  for (uint32_t word : {kRet, kBrX9}) {
    const Trampoline t = written(word);
    EXPECT_EQ(t.copy(0), word);
  }
}

TEST(Arm64Optimize, TheCopyStartsAtTheSameOffsetInEveryTrampoline) {
  const size_t offset = displaced_copy_offset();
  EXPECT_EQ(offset % 4, 0u);
  EXPECT_EQ(written(kBeq).word(offset - 4), written(kAdrX6).word(offset - 4));
  EXPECT_EQ(written(kBeq).word(offset - 4), 0x910443ffu);  // add sp, sp, #0x110
}

}  // namespace
}  // namespace dprobe::arch::arm64
