// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "arch/x86_64/slot.h"

namespace dprobe::arch::x86_64 {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

struct Written {
  Result<size_t, std::string> size;
  std::array<uint8_t, kSlotSize> bytes{};
};

Insn insn_at(const Bytes& bytes, uint64_t address) {
  auto insn = decode_insn(bytes, address);
  EXPECT_TRUE(insn) << insn.error();
  return insn ? *insn : Insn{};
}

Written write_slot(const Insn& insn, uint64_t slot_address) {
  std::array<uint8_t, kSlotSize> bytes{};
  auto size = write_out_of_line_slot(insn, classify_insn(insn), slot_address, bytes);
  return {std::move(size), bytes};
}

Bytes first(const Written& w) {
  return Bytes(w.bytes.begin(), w.bytes.begin() + static_cast<std::ptrdiff_t>(*w.size));
}

TEST(X86OutOfLineSlot, PlainInstructionJumpsBack) {
  // 0x401000: 48 89 e5             mov rbp, rsp
  Written w = write_slot(insn_at({0x48, 0x89, 0xe5}, 0x401000), 0x402000);
  ASSERT_TRUE(w.size) << w.size.error();
  // 0x402000: 48 89 e5             mov rbp, rsp
  // 0x402003: e9 fb ef ff ff       jmp 0x401003
  EXPECT_THAT(first(w), ElementsAreArray({0x48, 0x89, 0xe5, 0xe9, 0xfb, 0xef, 0xff, 0xff}));
  auto back = decode_insn(Bytes(w.bytes.begin() + 3, w.bytes.end()), 0x402003);
  ASSERT_TRUE(back);
  EXPECT_EQ(disassemble(*back), "0x402003: e9 fb ef ff ff       jmp 0x401003");
}

TEST(X86OutOfLineSlot, RipRelativeDisplacementIsRetargeted) {
  // 0x401000: 48 8b 05 f9 0f 00 00 mov rax, [rip+0xff9] = [0x402000]
  Insn insn = insn_at({0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00}, 0x401000);
  Written w = write_slot(insn, 0x500000);
  ASSERT_TRUE(w.size) << w.size.error();
  // 0x500000: 48 8b 05 f9 1f f0 ff mov rax, [rip-0xfe007] = [0x402000]
  // 0x500007: e9 fb 0f f0 ff       jmp 0x401007
  EXPECT_THAT(first(w), ElementsAreArray({0x48, 0x8b, 0x05, 0xf9, 0x1f, 0xf0, 0xff, 0xe9, 0xfb,
                                          0x0f, 0xf0, 0xff}));
  // The copy, decoded where it runs, refers to the same absolute address.
  Insn copy = insn_at(first(w), 0x500000);
  Classified c = classify_insn(copy);
  EXPECT_TRUE(c.rip_relative);
  EXPECT_EQ(c.rip_target, 0x402000u);
  EXPECT_EQ(disassemble(copy), "0x500000: 48 8b 05 f9 1f f0 ff mov rax, [0x402000]");
}

TEST(X86OutOfLineSlot, RipRelativeWithAnImmediateAfterTheDisplacement) {
  // 0x401000: 48 83 3d f8 0f 00 00 05    cmp qword ptr [rip+0xff8], 0x5 = [0x402000]
  Insn insn = insn_at({0x48, 0x83, 0x3d, 0xf8, 0x0f, 0x00, 0x00, 0x05}, 0x401000);
  Written w = write_slot(insn, 0x400000);
  ASSERT_TRUE(w.size) << w.size.error();
  ASSERT_EQ(*w.size, 13u);
  Insn copy = insn_at(first(w), 0x400000);
  EXPECT_EQ(disassemble(copy), "0x400000: 48 83 3d f8 1f 00 00 05 cmp qword ptr [0x402000], 0x5");
}

TEST(X86OutOfLineSlot, FarSlotJumpsBackThroughAnAbsoluteAddress) {
  // 0x401000: 55                   push rbp
  Written w = write_slot(insn_at({0x55}, 0x401000), 0x7f0000000000);
  ASSERT_TRUE(w.size) << w.size.error();
  // 0x7f0000000000: 55                   push rbp
  // 0x7f0000000001: ff 25 00 00 00 00    jmp [rip+0x0]
  // 0x7f0000000007: 01 10 40 00 00 00 00 00  (0x401001)
  EXPECT_THAT(first(w), ElementsAreArray({0x55, 0xff, 0x25, 0x00, 0x00, 0x00, 0x00, 0x01, 0x10,
                                          0x40, 0x00, 0x00, 0x00, 0x00, 0x00}));
}

TEST(X86OutOfLineSlot, FarBackButNearTheData) {
  // 0x401000: 48 8b 05 f9 ff ff 7f mov rax, [rip+0x7ffffff9] = [0x80401000]
  Insn insn = insn_at({0x48, 0x8b, 0x05, 0xf9, 0xff, 0xff, 0x7f}, 0x401000);
  Written w = write_slot(insn, 0x90000000);
  ASSERT_TRUE(w.size) << w.size.error();
  // 0x90000000: 48 8b 05 f9 0f 40 f0 mov rax, [rip-0xfbff007] = [0x80401000]
  // 0x90000007: ff 25 00 00 00 00    jmp [rip+0x0] -> 0x401007
  EXPECT_THAT(first(w),
              ElementsAreArray({0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x40, 0xf0, 0xff, 0x25, 0x00, 0x00,
                                0x00, 0x00, 0x07, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00}));
  EXPECT_EQ(classify_insn(insn_at(first(w), 0x90000000)).rip_target, 0x80401000u);
}

TEST(X86OutOfLineSlot, DisplacementOutOfReachIsAnError) {
  // 0x401000: 48 8b 05 f9 0f 00 00 mov rax, [rip+0xff9] = [0x402000]
  Insn insn = insn_at({0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00}, 0x401000);
  Written w = write_slot(insn, 0x7f0000000000);
  ASSERT_FALSE(w.size);
  EXPECT_EQ(w.size.error(),
            "the instruction at 0x401000 refers to 0x402000, which is -133169148.0 MiB from the "
            "slot at 0x7f0000000000: beyond the +/-2048 MiB a RIP-relative disp32 reaches");
  // The slot's next instruction exactly 2 GiB after the data: disp32 = -2^31 still fits.
  Written edge = write_slot(insn, 0x402000 + 0x80000000 - 7);
  EXPECT_TRUE(edge.size) << edge.size.error();
  Written past = write_slot(insn, 0x402000 + 0x80000000 - 7 + 1);
  EXPECT_FALSE(past.size);
}

TEST(X86OutOfLineSlot, OnlyForOutOfLineInstructions) {
  // e8 00 00 00 00          call 0x401005: emulated, no slot
  Written w = write_slot(insn_at({0xe8, 0x00, 0x00, 0x00, 0x00}, 0x401000), 0x402000);
  ASSERT_FALSE(w.size);
  EXPECT_THAT(w.size.error(), HasSubstr("only an out-of-line instruction"));
}

TEST(X86OutOfLineSlot, BufferTooSmall) {
  Insn insn = insn_at({0x55}, 0x401000);
  std::array<uint8_t, 8> small{};
  auto size = write_out_of_line_slot(insn, classify_insn(insn), 0x402000, small);
  ASSERT_FALSE(size);
  EXPECT_EQ(size.error(), "the slot buffer holds 8 bytes, needs 15");
}

TEST(X86OutOfLineSlot, LongestInstructionFitsWithTheFarJump) {
  // 66 66 66 66 66 2e 66 0f 1f 84 00 00 00 00 00    15-byte nop
  const Bytes nop15 = {0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x66, 0x0f,
                       0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00};
  Written w = write_slot(insn_at(nop15, 0x401000), 0x7f0000000000);
  ASSERT_TRUE(w.size) << w.size.error();
  EXPECT_EQ(*w.size, 29u);
  EXPECT_LE(*w.size, kSlotSize);
}

}  // namespace
}  // namespace dprobe::arch::x86_64
