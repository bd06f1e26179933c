// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "arch/x86_64/emulate.h"

namespace dprobe::arch::x86_64 {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint64_t kAt = 0x401000;
constexpr uint64_t kStackTop = 0x7ffe0000;  // sp of every test; the stack is mapped below and above

constexpr uint64_t kCF = 1u << 0;
constexpr uint64_t kPF = 1u << 2;
constexpr uint64_t kZF = 1u << 6;
constexpr uint64_t kSF = 1u << 7;
constexpr uint64_t kOF = 1u << 11;

// Memory of mapped bytes; any unmapped byte faults the whole access, which
// then changes nothing.
class FakeMemory final : public MemoryAccess {
 public:
  void map(uint64_t address, size_t size) {
    for (size_t i = 0; i < size; ++i) bytes_[address + i] = 0;
  }
  void put_u64(uint64_t address, uint64_t value) {
    for (unsigned i = 0; i < 8; ++i) bytes_[address + i] = static_cast<uint8_t>(value >> (8 * i));
  }
  uint64_t u64(uint64_t address) const {
    uint64_t value = 0;
    for (unsigned i = 0; i < 8; ++i) value |= uint64_t{bytes_.at(address + i)} << (8 * i);
    return value;
  }

  bool read(uint64_t address, void* dst, size_t size) override {
    ++reads;
    if (!mapped(address, size)) return false;
    auto* out = static_cast<uint8_t*>(dst);
    for (size_t i = 0; i < size; ++i) out[i] = bytes_[address + i];
    return true;
  }
  bool write(uint64_t address, const void* src, size_t size) override {
    if (!mapped(address, size)) return false;
    const auto* in = static_cast<const uint8_t*>(src);
    for (size_t i = 0; i < size; ++i) bytes_[address + i] = in[i];
    return true;
  }

  int reads = 0;

 private:
  bool mapped(uint64_t address, size_t size) const {
    for (size_t i = 0; i < size; ++i) {
      if (bytes_.count(address + i) == 0) return false;
    }
    return true;
  }
  std::map<uint64_t, uint8_t> bytes_;
};

class X86Emulate : public ::testing::Test {
 protected:
  void SetUp() override {
    std::memset(&regs_, 0, sizeof(regs_));
    regs_.slot[kSp] = kStackTop;
    memory_.map(kStackTop - 64, 128);
  }

  // Decodes, classifies and emulates `bytes` at kAt (ip set as the trap handler does).
  EmulateStatus run(const Bytes& bytes, uint64_t address = kAt) {
    auto insn = decode_insn(bytes, address);
    EXPECT_TRUE(insn) << insn.error();
    if (!insn) return EmulateStatus::kFault;
    Classified c = classify_insn(*insn);
    EXPECT_EQ(c.cls, InsnClass::kEmulate) << disassemble(*insn) << ": " << c.reason;
    regs_.slot[kIp] = address;
    return emulate_insn(*insn, c, regs_, memory_);
  }

  // Same as run(), expecting a fault that leaves every register as it was.
  void expect_fault(const Bytes& bytes) {
    regs_.slot[kIp] = kAt;
    SavedRegs before = regs_;
    EXPECT_EQ(run(bytes), EmulateStatus::kFault);
    EXPECT_EQ(std::memcmp(&before, &regs_, sizeof(regs_)), 0) << "registers changed";
  }

  uint64_t& reg(Reg r) { return regs_.slot[r]; }

  SavedRegs regs_;
  FakeMemory memory_;
};

TEST_F(X86Emulate, CallRel32PushesTheReturnAddress) {
  // e8 fb 0f 00 00          call 0x402000
  ASSERT_EQ(run({0xe8, 0xfb, 0x0f, 0x00, 0x00}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x402000u);
  EXPECT_EQ(reg(kSp), kStackTop - 8);
  EXPECT_EQ(memory_.u64(kStackTop - 8), 0x401005u);
}

TEST_F(X86Emulate, CallWithAnUnmappedStackFaults) {
  reg(kSp) = 0x1000;
  // e8 fb 0f 00 00          call 0x402000
  expect_fault({0xe8, 0xfb, 0x0f, 0x00, 0x00});
}

TEST_F(X86Emulate, JmpRel) {
  // e9 fb ef ff ff          jmp 0x400000
  ASSERT_EQ(run({0xe9, 0xfb, 0xef, 0xff, 0xff}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x400000u);
  // eb 10                   jmp 0x401012
  ASSERT_EQ(run({0xeb, 0x10}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x401012u);
  EXPECT_EQ(reg(kSp), kStackTop) << "jmp does not touch the stack";
}

// Which of o no b ae e ne be a s ns p np l ge le g hold, for a set of flags.
struct FlagsRow {
  uint64_t rflags;
  const char* holds;  // 16 of '0'/'1', in condition-code order
};

// clang-format off
constexpr FlagsRow kFlagsTable[] = {
    //                  o n b a e n b a s n p n l g l g
    //                    o   e   e e     s   p   e e
    {0,               "0101010101010101"},
    {kCF,             "0110011001010101"},
    {kZF,             "0101101001010110"},
    {kSF,             "0101010110011010"},
    {kOF,             "1001010101011010"},
    {kPF,             "0101010101100101"},
    {kSF | kOF,       "1001010110010101"},
    {kZF | kSF,       "0101101010011010"},
    {kCF | kZF,       "0110101001010110"},
    {kCF | kPF | kZF | kSF | kOF, "1010101010100110"},
};
// clang-format on

TEST(X86ConditionHolds, AllSixteenConditions) {
  for (const FlagsRow& row : kFlagsTable) {
    for (uint8_t cc = 0; cc < 16; ++cc) {
      EXPECT_EQ(condition_holds(cc, row.rflags), row.holds[cc] == '1')
          << "cc " << int{cc} << " rflags 0x" << std::hex << row.rflags;
    }
  }
}

TEST_F(X86Emulate, JccTakenAndNotTakenForAllConditions) {
  for (const FlagsRow& row : kFlagsTable) {
    for (uint8_t cc = 0; cc < 16; ++cc) {
      SCOPED_TRACE(testing::Message()
                   << "cc " << int{cc} << " rflags 0x" << std::hex << row.rflags);
      const bool taken = row.holds[cc] == '1';
      reg(kFlags) = row.rflags | 0x202;  // IF and the reserved bit, as in real rflags
      // 70+cc 10                jcc 0x401012
      ASSERT_EQ(run({static_cast<uint8_t>(0x70 + cc), 0x10}), EmulateStatus::kOk);
      EXPECT_EQ(reg(kIp), taken ? 0x401012u : 0x401002u);
      // 0f 80+cc fa ef ff ff    jcc 0x400000
      ASSERT_EQ(run({0x0f, static_cast<uint8_t>(0x80 + cc), 0xfa, 0xef, 0xff, 0xff}),
                EmulateStatus::kOk);
      EXPECT_EQ(reg(kIp), taken ? 0x400000u : 0x401006u);
    }
  }
}

TEST_F(X86Emulate, LoopDecrementsRcx) {
  // e2 fe                   loop 0x401000
  const Bytes loop = {0xe2, 0xfe};
  reg(kCx) = 3;
  ASSERT_EQ(run(loop), EmulateStatus::kOk);
  EXPECT_EQ(reg(kCx), 2u);
  EXPECT_EQ(reg(kIp), 0x401000u);
  reg(kCx) = 1;
  ASSERT_EQ(run(loop), EmulateStatus::kOk);
  EXPECT_EQ(reg(kCx), 0u);
  EXPECT_EQ(reg(kIp), 0x401002u);
  reg(kCx) = 0;  // wraps to 2^64-1: taken
  ASSERT_EQ(run(loop), EmulateStatus::kOk);
  EXPECT_EQ(reg(kCx), ~uint64_t{0});
  EXPECT_EQ(reg(kIp), 0x401000u);
  reg(kCx) = 0x100000001;  // all 64 bits count
  ASSERT_EQ(run(loop), EmulateStatus::kOk);
  EXPECT_EQ(reg(kCx), 0x100000000u);
  EXPECT_EQ(reg(kIp), 0x401000u);
}

TEST_F(X86Emulate, LoopWithAddressSizePrefixCountsInEcx) {
  // 67 e2 fd                loop 0x401000 (ecx)
  const Bytes loop = {0x67, 0xe2, 0xfd};
  reg(kCx) = 0xdeadbeef00000001;  // ecx 1 -> 0: not taken, upper half zeroed
  ASSERT_EQ(run(loop), EmulateStatus::kOk);
  EXPECT_EQ(reg(kCx), 0u);
  EXPECT_EQ(reg(kIp), 0x401003u);
  reg(kCx) = 0xffffffff00000000;  // ecx 0 -> 0xffffffff: taken
  ASSERT_EQ(run(loop), EmulateStatus::kOk);
  EXPECT_EQ(reg(kCx), 0xffffffffu);
  EXPECT_EQ(reg(kIp), 0x401000u);
}

TEST_F(X86Emulate, LoopeAndLoopneAlsoTestZf) {
  // e1 10                   loope 0x401012
  const Bytes loope = {0xe1, 0x10};
  // e0 10                   loopne 0x401012
  const Bytes loopne = {0xe0, 0x10};
  struct Row {
    uint64_t rcx, flags;
    bool loope_taken, loopne_taken;
  };
  const Row rows[] = {
      {2, kZF, true, false},
      {2, 0, false, true},
      {1, kZF, false, false},  // the count runs out either way
      {1, 0, false, false},
  };
  for (const Row& row : rows) {
    reg(kCx) = row.rcx;
    reg(kFlags) = row.flags;
    ASSERT_EQ(run(loope), EmulateStatus::kOk);
    EXPECT_EQ(reg(kCx), row.rcx - 1);
    EXPECT_EQ(reg(kIp), row.loope_taken ? 0x401012u : 0x401002u) << row.rcx << " " << row.flags;
    reg(kCx) = row.rcx;
    ASSERT_EQ(run(loopne), EmulateStatus::kOk);
    EXPECT_EQ(reg(kCx), row.rcx - 1);
    EXPECT_EQ(reg(kIp), row.loopne_taken ? 0x401012u : 0x401002u) << row.rcx << " " << row.flags;
  }
  // 67 e1 10                loope 0x401013 (ecx)
  reg(kCx) = 0x500000002;
  reg(kFlags) = kZF;
  ASSERT_EQ(run({0x67, 0xe1, 0x10}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kCx), 1u);
  EXPECT_EQ(reg(kIp), 0x401013u);
}

TEST_F(X86Emulate, JrcxzAndJecxzTestWithoutDecrementing) {
  // e3 10                   jrcxz 0x401012
  const Bytes jrcxz = {0xe3, 0x10};
  // 67 e3 10                jecxz 0x401013
  const Bytes jecxz = {0x67, 0xe3, 0x10};
  reg(kCx) = 0;
  ASSERT_EQ(run(jrcxz), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x401012u);
  reg(kCx) = 1;
  ASSERT_EQ(run(jrcxz), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x401002u);
  reg(kCx) = 0x100000000;
  ASSERT_EQ(run(jrcxz), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x401002u) << "rcx is not zero";
  ASSERT_EQ(run(jecxz), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x401013u) << "ecx is zero";
  EXPECT_EQ(reg(kCx), 0x100000000u) << "no write to rcx";
  reg(kCx) = 7;
  ASSERT_EQ(run(jecxz), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x401003u);
}

TEST_F(X86Emulate, RetPopsTheReturnAddress) {
  memory_.put_u64(kStackTop, 0x401234);
  // c3                      ret
  ASSERT_EQ(run({0xc3}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x401234u);
  EXPECT_EQ(reg(kSp), kStackTop + 8);
}

TEST_F(X86Emulate, RetImmediateAlsoPopsArguments) {
  memory_.put_u64(kStackTop, 0x401234);
  // c2 10 00                ret 0x10
  ASSERT_EQ(run({0xc2, 0x10, 0x00}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x401234u);
  EXPECT_EQ(reg(kSp), kStackTop + 8 + 0x10);
}

TEST_F(X86Emulate, RetFromAnUnmappedStackFaults) {
  reg(kSp) = 0x1000;
  // c3                      ret
  expect_fault({0xc3});
}

TEST_F(X86Emulate, CallAndJmpThroughARegister) {
  reg(kAx) = 0x403000;
  // ff d0                   call rax
  ASSERT_EQ(run({0xff, 0xd0}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x403000u);
  EXPECT_EQ(reg(kSp), kStackTop - 8);
  EXPECT_EQ(memory_.u64(kStackTop - 8), 0x401002u);

  reg(kR11) = 0x404000;
  // 41 ff e3                jmp r11
  ASSERT_EQ(run({0x41, 0xff, 0xe3}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x404000u);
  EXPECT_EQ(reg(kSp), kStackTop - 8);

  reg(kAx) = 0x405000;
  // 3e ff e0                notrack jmp rax
  ASSERT_EQ(run({0x3e, 0xff, 0xe0}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x405000u);
}

TEST_F(X86Emulate, CallRspGoesWhereRspWasBeforeThePush) {
  // ff d4                   call rsp
  ASSERT_EQ(run({0xff, 0xd4}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), kStackTop);
  EXPECT_EQ(reg(kSp), kStackTop - 8);
}

TEST_F(X86Emulate, CallAndJmpThroughBaseIndexScaleDisp) {
  reg(kAx) = 0x600000;
  reg(kR9) = 3;
  memory_.map(0x600000 + 3 * 8 + 0x10, 8);
  memory_.put_u64(0x600000 + 3 * 8 + 0x10, 0x407000);
  // 42 ff 54 c8 10          call [rax+r9*8+0x10]
  ASSERT_EQ(run({0x42, 0xff, 0x54, 0xc8, 0x10}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x407000u);
  EXPECT_EQ(memory_.u64(kStackTop - 8), 0x401005u);
  // 42 ff 64 c8 10          jmp [rax+r9*8+0x10]
  ASSERT_EQ(run({0x42, 0xff, 0x64, 0xc8, 0x10}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x407000u);
  EXPECT_EQ(reg(kSp), kStackTop - 8);
}

TEST_F(X86Emulate, JumpTableWithoutBase) {
  reg(kAx) = 2;
  memory_.map(0x402000 + 2 * 8, 8);
  memory_.put_u64(0x402000 + 2 * 8, 0x408000);
  // 3e ff 24 c5 00 20 40 00 notrack jmp [rax*8+0x402000]
  ASSERT_EQ(run({0x3e, 0xff, 0x24, 0xc5, 0x00, 0x20, 0x40, 0x00}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x408000u);
}

TEST_F(X86Emulate, CallThroughRspPlus8ReadsBeforePushing) {
  memory_.put_u64(kStackTop + 8, 0x409000);
  memory_.put_u64(kStackTop, 0xbad);
  // ff 54 24 08             call [rsp+0x8]
  ASSERT_EQ(run({0xff, 0x54, 0x24, 0x08}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x409000u) << "the target comes from the old rsp+8";
  EXPECT_EQ(reg(kSp), kStackTop - 8);
  EXPECT_EQ(memory_.u64(kStackTop - 8), 0x401004u);
}

TEST_F(X86Emulate, CallAndJmpThroughRipRelativeMemory) {
  memory_.map(0x402000, 8);
  memory_.put_u64(0x402000, 0x40a000);
  // ff 15 fa 0f 00 00       call [rip+0xffa] = [0x402000]
  ASSERT_EQ(run({0xff, 0x15, 0xfa, 0x0f, 0x00, 0x00}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x40a000u);
  EXPECT_EQ(memory_.u64(kStackTop - 8), 0x401006u);
  // ff 25 fa 0f 00 00       jmp [rip+0xffa] = [0x402000]
  ASSERT_EQ(run({0xff, 0x25, 0xfa, 0x0f, 0x00, 0x00}), EmulateStatus::kOk);
  EXPECT_EQ(reg(kIp), 0x40a000u);
}

TEST_F(X86Emulate, UnreadableTargetFaultsWithRegistersUntouched) {
  reg(kAx) = 0xdead0000;
  // ff 10                   call [rax]
  expect_fault({0xff, 0x10});
  // ff 25 fa 0f 00 00       jmp [rip+0xffa] = [0x402000], unmapped
  expect_fault({0xff, 0x25, 0xfa, 0x0f, 0x00, 0x00});
  EXPECT_EQ(memory_.u64(kStackTop - 8), 0u) << "nothing pushed";
}

TEST_F(X86Emulate, IndirectCallWithAnUnmappedStackFaults) {
  memory_.map(0x402000, 8);
  memory_.put_u64(0x402000, 0x40a000);
  reg(kSp) = 0x1000;
  // ff 15 fa 0f 00 00       call [rip+0xffa] = [0x402000]
  expect_fault({0xff, 0x15, 0xfa, 0x0f, 0x00, 0x00});
}

TEST_F(X86Emulate, RefusesWhatIsNotEmulated) {
  // 48 89 e5                mov rbp, rsp: out of line
  auto insn = decode_insn(Bytes{0x48, 0x89, 0xe5}, kAt);
  ASSERT_TRUE(insn);
  regs_.slot[kIp] = kAt;
  SavedRegs before = regs_;
  EXPECT_EQ(emulate_insn(*insn, classify_insn(*insn), regs_, memory_), EmulateStatus::kFault);
  EXPECT_EQ(std::memcmp(&before, &regs_, sizeof(regs_)), 0);
}

}  // namespace
}  // namespace dprobe::arch::x86_64
