// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Words assembled with GNU as 2.40 (aarch64-linux-gnu-as) and read back
// with aarch64-linux-gnu-objdump -d; the comment is the source line. ADRP
// words come from a binary linked at 0x200000abc.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "arch/arm64/decode.h"
#include "arch/arm64/regs.h"
#include "arch/arm64/simulate.h"
#include "unit/arch/arm64_fakes.h"

namespace dprobe::arch::arm64 {
namespace {

constexpr uint64_t kAt = 0x400000;
constexpr uint64_t kAdrpAt = 0x200000abc;

bool same(const SavedRegs& a, const SavedRegs& b) {
  return std::memcmp(a.slot, b.slot, sizeof(a.slot)) == 0;
}

class Arm64Simulate : public ::testing::Test {
 protected:
  // Decodes `word`, checks it is simulated, and runs it on regs_.
  SimulateStatus run(uint32_t word) {
    const Decoded d = decode_insn(word);
    EXPECT_EQ(d.cls, InsnClass::kSimulate) << d.reason;
    return simulate(d, regs_, memory_);
  }

  SavedRegs regs_ = registers_at(kAt);
  FakeMemory memory_;
};

// ---- Conditions: which of the 16 NZCV values (index N:Z:C:V) each holds for

// Worked out by hand from the Arm ARM's ConditionHolds, one bit per NZCV
// value: e.g. eq holds where Z (index bit 2) is set, 0xf0f0.
constexpr uint16_t kHoldsFor[16] = {
    0xf0f0, 0x0f0f,  // eq ne: Z
    0xcccc, 0x3333,  // cs cc: C
    0xff00, 0x00ff,  // mi pl: N
    0xaaaa, 0x5555,  // vs vc: V
    0x0c0c, 0xf3f3,  // hi ls: C and not Z
    0xaa55, 0x55aa,  // ge lt: N == V
    0x0a05, 0xf5fa,  // gt le: not Z and N == V
    0xffff, 0xffff,  // al nv
};

uint64_t pstate_of(unsigned nzcv) { return uint64_t{nzcv} << 28; }

TEST_F(Arm64Simulate, ConditionHoldsForEveryConditionAndFlags) {
  for (uint8_t cond = 0; cond < 16; ++cond) {
    for (unsigned nzcv = 0; nzcv < 16; ++nzcv) {
      const bool expected = ((kHoldsFor[cond] >> nzcv) & 1) != 0;
      EXPECT_EQ(condition_holds(cond, pstate_of(nzcv)), expected)
          << "cond " << int{cond} << " nzcv " << nzcv;
    }
  }
}

// Bits of pstate other than NZCV do not matter.
TEST_F(Arm64Simulate, ConditionIgnoresOtherPstateBits) {
  EXPECT_FALSE(condition_holds(0, ~kFlagZ));  // eq
  EXPECT_TRUE(condition_holds(1, ~kFlagZ));   // ne
}

// b.<cond> .+8 for cond = 0..15: 0x54000040 | cond (eq ne cs cc mi pl vs vc
// hi ls ge lt gt le al nv, assembled in that order).
TEST_F(Arm64Simulate, BCondTakenOrNotForEveryCondition) {
  for (uint8_t cond = 0; cond < 16; ++cond) {
    for (unsigned nzcv = 0; nzcv < 16; ++nzcv) {
      regs_ = registers_at(kAt);
      regs_.slot[kPstate] = pstate_of(nzcv) | 0x3c0;  // DAIF set too
      const SavedRegs before = regs_;
      ASSERT_EQ(run(0x54000040u | cond), SimulateStatus::kOk);
      const bool taken = ((kHoldsFor[cond] >> nzcv) & 1) != 0;
      EXPECT_EQ(regs_.slot[kPc], taken ? kAt + 8 : kAt + 4)
          << "cond " << int{cond} << " nzcv " << nzcv;
      regs_.slot[kPc] = before.slot[kPc];
      EXPECT_TRUE(same(regs_, before));
    }
  }
}

TEST_F(Arm64Simulate, BCondBackward) {
  regs_.slot[kPstate] = kFlagZ;
  ASSERT_EQ(run(0x54800000), SimulateStatus::kOk);  // b.eq .-0x100000
  EXPECT_EQ(regs_.slot[kPc], kAt - 0x100000);
}

TEST_F(Arm64Simulate, BcCondLikeBCond) {
  regs_.slot[kPstate] = kFlagZ;
  ASSERT_EQ(run(0x54000050), SimulateStatus::kOk);  // bc.eq .+8
  EXPECT_EQ(regs_.slot[kPc], kAt + 8);
}

// ---- B, BL

TEST_F(Arm64Simulate, BranchForwardAndBack) {
  SavedRegs expected = regs_;
  ASSERT_EQ(run(0x15ffffff), SimulateStatus::kOk);  // b .+0x7fffffc
  expected.slot[kPc] = kAt + 0x7fffffc;
  EXPECT_TRUE(same(regs_, expected));
  ASSERT_EQ(run(0x16000000), SimulateStatus::kOk);  // b .-0x8000000
  EXPECT_EQ(regs_.slot[kPc], kAt + 0x7fffffc - 0x8000000);
}

TEST_F(Arm64Simulate, BranchAndLinkSetsX30) {
  SavedRegs expected = regs_;
  ASSERT_EQ(run(0x97ffffff), SimulateStatus::kOk);  // bl .-4
  expected.slot[kPc] = kAt - 4;
  expected.slot[kLr] = kAt + 4;
  EXPECT_TRUE(same(regs_, expected));
  ASSERT_EQ(run(0x94000040), SimulateStatus::kOk);  // bl .+0x100
  EXPECT_EQ(regs_.slot[kPc], kAt - 4 + 0x100);
  EXPECT_EQ(regs_.slot[kLr], kAt);
}

// ---- CBZ, CBNZ: the W form sees only the low 32 bits

TEST_F(Arm64Simulate, CbzWordIgnoresTheHighHalf) {
  regs_.slot[3] = 0x100000000;
  ASSERT_EQ(run(0x34000083), SimulateStatus::kOk);  // cbz w3, .+16
  EXPECT_EQ(regs_.slot[kPc], kAt + 16);
  regs_.slot[kPc] = kAt;
  ASSERT_EQ(run(0xb4ffff83), SimulateStatus::kOk);  // cbz x3, .-16
  EXPECT_EQ(regs_.slot[kPc], kAt + 4);
}

TEST_F(Arm64Simulate, CbzTakenOnZero) {
  regs_.slot[3] = 0;
  ASSERT_EQ(run(0xb4ffff83), SimulateStatus::kOk);  // cbz x3, .-16
  EXPECT_EQ(regs_.slot[kPc], kAt - 16);
}

TEST_F(Arm64Simulate, CbnzWordAndDouble) {
  regs_.slot[30] = 0xffffffff00000000;
  ASSERT_EQ(run(0x357ffffe), SimulateStatus::kOk);  // cbnz w30, .+0xffffc
  EXPECT_EQ(regs_.slot[kPc], kAt + 4);
  regs_.slot[0] = 0x8000000000000000;
  regs_.slot[kPc] = kAt;
  ASSERT_EQ(run(0xb5800000), SimulateStatus::kOk);  // cbnz x0, .-0x100000
  EXPECT_EQ(regs_.slot[kPc], kAt - 0x100000);
}

// Register 31 is the zero register here, not sp.
TEST_F(Arm64Simulate, CbzOfZeroRegister) {
  regs_.slot[kSp] = 0x7ffff000;
  ASSERT_EQ(run(0x3400009f), SimulateStatus::kOk);  // cbz wzr, .+16
  EXPECT_EQ(regs_.slot[kPc], kAt + 16);
  regs_.slot[kPc] = kAt;
  ASSERT_EQ(run(0xb500009f), SimulateStatus::kOk);  // cbnz xzr, .+16
  EXPECT_EQ(regs_.slot[kPc], kAt + 4);
}

// ---- TBZ, TBNZ

TEST_F(Arm64Simulate, TbzBit63) {
  regs_.slot[5] = 0x7fffffffffffffff;
  ASSERT_EQ(run(0xb6ffffc5), SimulateStatus::kOk);  // tbz x5, #63, .-8
  EXPECT_EQ(regs_.slot[kPc], kAt - 8);
  regs_.slot[5] = 0x8000000000000000;
  regs_.slot[kPc] = kAt;
  ASSERT_EQ(run(0xb6ffffc5), SimulateStatus::kOk);
  EXPECT_EQ(regs_.slot[kPc], kAt + 4);
}

TEST_F(Arm64Simulate, TbnzBit32And31) {
  regs_.slot[30] = 0x100000000;
  ASSERT_EQ(run(0xb703fffe), SimulateStatus::kOk);  // tbnz x30, #32, .+0x7ffc
  EXPECT_EQ(regs_.slot[kPc], kAt + 0x7ffc);
  regs_.slot[1] = 0x7fffffff;
  regs_.slot[kPc] = kAt;
  ASSERT_EQ(run(0x37fc0001), SimulateStatus::kOk);  // tbnz w1, #31, .-0x8000
  EXPECT_EQ(regs_.slot[kPc], kAt + 4);
  regs_.slot[1] = 0x80000000;
  regs_.slot[kPc] = kAt;
  ASSERT_EQ(run(0x37fc0001), SimulateStatus::kOk);
  EXPECT_EQ(regs_.slot[kPc], kAt - 0x8000);
}

TEST_F(Arm64Simulate, TbzBit0AndZeroRegister) {
  regs_.slot[5] = 0xfffffffffffffffe;
  ASSERT_EQ(run(0x36000045), SimulateStatus::kOk);  // tbz w5, #0, .+8
  EXPECT_EQ(regs_.slot[kPc], kAt + 8);
  regs_.slot[kPc] = kAt;
  ASSERT_EQ(run(0xb7f8005f), SimulateStatus::kOk);  // tbnz xzr, #63, .+8
  EXPECT_EQ(regs_.slot[kPc], kAt + 4);
}

// ---- ADR, ADRP

TEST_F(Arm64Simulate, AdrBothWays) {
  SavedRegs expected = regs_;
  ASSERT_EQ(run(0x70fffff1), SimulateStatus::kOk);  // adr x17, .-1
  expected.slot[17] = kAt - 1;
  expected.slot[kPc] = kAt + 4;
  EXPECT_TRUE(same(regs_, expected));
  regs_.slot[kPc] = kAt;
  ASSERT_EQ(run(0x707fffe1), SimulateStatus::kOk);  // adr x1, .+0xfffff
  EXPECT_EQ(regs_.slot[1], kAt + 0xfffff);
}

TEST_F(Arm64Simulate, AdrpPageMath) {
  struct Case {
    uint32_t word;
    uint8_t reg;
    uint64_t page;
  };
  const Case cases[] = {
      {0xb0000003, 3, 0x200001000},  // adrp x3, .+0x1000
      {0xf0ffffe4, 4, 0x1fffff000},  // adrp x4, .-0x1000
      {0xf07fffe5, 5, 0x2fffff000},  // adrp x5, .+0xfffff000
      {0x90800006, 6, 0x100000000},  // adrp x6, .-0x100000000
  };
  for (const Case& c : cases) {
    regs_ = registers_at(kAdrpAt);
    SavedRegs expected = regs_;
    ASSERT_EQ(run(c.word), SimulateStatus::kOk);
    expected.slot[c.reg] = c.page;
    expected.slot[kPc] = kAdrpAt + 4;
    EXPECT_TRUE(same(regs_, expected)) << std::hex << c.word;
  }
}

// The page is of the instruction's own address, whatever its low bits.
TEST_F(Arm64Simulate, AdrpAtPageEdges) {
  regs_ = registers_at(0x200000ffc);
  ASSERT_EQ(run(0xf0ffffe4), SimulateStatus::kOk);  // adrp x4, .-0x1000
  EXPECT_EQ(regs_.slot[4], 0x1fffff000u);
  regs_ = registers_at(0x200001000);
  ASSERT_EQ(run(0xf0ffffe4), SimulateStatus::kOk);
  EXPECT_EQ(regs_.slot[4], 0x200000000u);
}

TEST_F(Arm64Simulate, AdrpToZeroRegisterWritesNothing) {
  regs_ = registers_at(kAdrpAt);
  SavedRegs expected = regs_;
  ASSERT_EQ(run(0xf000001f), SimulateStatus::kOk);  // adrp xzr, .+0x3000
  expected.slot[kPc] = kAdrpAt + 4;
  EXPECT_TRUE(same(regs_, expected));
}

// ---- Literal loads

TEST_F(Arm64Simulate, LdrWordZeroExtends) {
  memory_.put(kAt + 8, 0xfedcba9876543210, 8);
  SavedRegs expected = regs_;
  ASSERT_EQ(run(0x18000047), SimulateStatus::kOk);  // ldr w7, .+8
  expected.slot[7] = 0x76543210;
  expected.slot[kPc] = kAt + 4;
  EXPECT_TRUE(same(regs_, expected));
  EXPECT_EQ(memory_.reads, 1);
}

TEST_F(Arm64Simulate, LdrDoubleBackward) {
  memory_.put(kAt - 8, 0x8877665544332211, 8);
  ASSERT_EQ(run(0x58ffffc8), SimulateStatus::kOk);  // ldr x8, .-8
  EXPECT_EQ(regs_.slot[8], 0x8877665544332211u);
  EXPECT_EQ(regs_.slot[kPc], kAt + 4);
}

TEST_F(Arm64Simulate, LdrswSignExtends) {
  memory_.put(kAt + 0xffffc, 0x80000001, 4);
  ASSERT_EQ(run(0x987fffe9), SimulateStatus::kOk);  // ldrsw x9, .+0xffffc
  EXPECT_EQ(regs_.slot[9], 0xffffffff80000001u);
  memory_.put(kAt + 4 + 0xffffc, 0x7fffffff, 4);
  ASSERT_EQ(run(0x987fffe9), SimulateStatus::kOk);
  EXPECT_EQ(regs_.slot[9], 0x7fffffffu);
  EXPECT_EQ(regs_.slot[kPc], kAt + 8);
}

// Only 4 bytes are read for a W load: the next ones may be unmapped.
TEST_F(Arm64Simulate, LdrWordReadsFourBytes) {
  memory_.put(kAt + 8, 0x12345678, 4);
  ASSERT_EQ(run(0x18000047), SimulateStatus::kOk);  // ldr w7, .+8
  EXPECT_EQ(regs_.slot[7], 0x12345678u);
}

TEST_F(Arm64Simulate, LdrFaultChangesNothing) {
  const SavedRegs before = regs_;
  EXPECT_EQ(run(0x58ffffc8), SimulateStatus::kFault);  // ldr x8, .-8
  EXPECT_TRUE(same(regs_, before));
  memory_.put(kAt - 8, 0x11223344, 4);  // half of it mapped
  EXPECT_EQ(run(0x58ffffc8), SimulateStatus::kFault);
  EXPECT_TRUE(same(regs_, before));
  EXPECT_EQ(run(0x987fffe9), SimulateStatus::kFault);  // ldrsw x9, .+0xffffc
  EXPECT_TRUE(same(regs_, before));
  EXPECT_EQ(memory_.writes, 0);
}

// The load happens (and may fault), but xzr keeps nothing.
TEST_F(Arm64Simulate, LdrToZeroRegister) {
  memory_.put(kAt + 8, 0x55, 8);
  SavedRegs expected = regs_;
  ASSERT_EQ(run(0x5800005f), SimulateStatus::kOk);  // ldr xzr, .+8
  expected.slot[kPc] = kAt + 4;
  EXPECT_TRUE(same(regs_, expected));
  EXPECT_EQ(memory_.reads, 1);
}

TEST_F(Arm64Simulate, PrfmReadsNothing) {
  SavedRegs expected = regs_;
  ASSERT_EQ(run(0xd8800000), SimulateStatus::kOk);  // prfm pldl1keep, .-0x100000
  expected.slot[kPc] = kAt + 4;
  EXPECT_TRUE(same(regs_, expected));
  EXPECT_EQ(memory_.reads, 0);
}

// ---- BR, BLR, RET

TEST_F(Arm64Simulate, BrJumpsToTheRegister) {
  regs_.slot[3] = 0x7f0000001234;
  SavedRegs expected = regs_;
  ASSERT_EQ(run(0xd61f0060), SimulateStatus::kOk);  // br x3
  expected.slot[kPc] = 0x7f0000001234;
  EXPECT_TRUE(same(regs_, expected));
}

TEST_F(Arm64Simulate, BrZeroRegisterJumpsToZero) {
  ASSERT_EQ(run(0xd61f03e0), SimulateStatus::kOk);  // br xzr
  EXPECT_EQ(regs_.slot[kPc], 0u);
}

TEST_F(Arm64Simulate, BlrX30UsesTheOldX30) {
  regs_.slot[kLr] = 0x500000;
  ASSERT_EQ(run(0xd63f03c0), SimulateStatus::kOk);  // blr x30
  EXPECT_EQ(regs_.slot[kPc], 0x500000u);
  EXPECT_EQ(regs_.slot[kLr], kAt + 4);
}

TEST_F(Arm64Simulate, RetToX30OrAnother) {
  regs_.slot[kLr] = 0x401234;
  SavedRegs expected = regs_;
  ASSERT_EQ(run(0xd65f03c0), SimulateStatus::kOk);  // ret
  expected.slot[kPc] = 0x401234;
  EXPECT_TRUE(same(regs_, expected));
  regs_.slot[2] = 0x404444;
  ASSERT_EQ(run(0xd65f0040), SimulateStatus::kOk);  // ret x2
  EXPECT_EQ(regs_.slot[kPc], 0x404444u);
  EXPECT_EQ(regs_.slot[kLr], 0x401234u);
}

// ---- Not simulated

TEST_F(Arm64Simulate, RefusesWhatIsNotSimulated) {
  const SavedRegs before = regs_;
  const uint32_t words[] = {
      0x91004020,  // add x0, x1, #0x10 (steps)
      0xd4000001,  // svc #0 (refused)
      0x1c000040,  // ldr s0, .+8 (refused)
  };
  for (uint32_t word : words) {
    EXPECT_EQ(simulate(decode_insn(word), regs_, memory_), SimulateStatus::kNotSimulated);
    EXPECT_TRUE(same(regs_, before));
  }
  EXPECT_EQ(memory_.reads, 0);
}

}  // namespace
}  // namespace dprobe::arch::arm64
