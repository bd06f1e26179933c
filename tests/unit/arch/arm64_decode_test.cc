// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every word below was assembled with GNU as 2.40 (aarch64-linux-gnu-as,
// `.arch armv8.8-a` with the extensions each needs) and read back with
// aarch64-linux-gnu-objdump -d; the comment is the source line. ADRP words
// come from a binary linked at 0x200000abc, so that the linker filled in
// the page offsets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "arch/arm64/decode.h"

namespace dprobe::arch::arm64 {
namespace {

using ::testing::StartsWith;

struct CaseName {
  template <typename Case>
  std::string operator()(const ::testing::TestParamInfo<Case>& param) const {
    return param.param.name;
  }
};

// ---- Simulated: the operation and every field it needs

struct SimulatedCase {
  const char* name;
  uint32_t word;
  Op op;
  uint8_t reg;
  bool wide;
  uint8_t bit;
  uint8_t cond;
  uint8_t load_bytes;
  int64_t offset;
};

class Arm64DecodeSimulated : public ::testing::TestWithParam<SimulatedCase> {};

TEST_P(Arm64DecodeSimulated, DecodesTheFields) {
  const SimulatedCase& c = GetParam();
  const Decoded d = decode_insn(c.word);
  EXPECT_EQ(d.cls, InsnClass::kSimulate);
  EXPECT_STREQ(d.reason, "");
  EXPECT_EQ(d.op, c.op);
  EXPECT_EQ(d.reg, c.reg);
  EXPECT_EQ(d.wide, c.wide);
  EXPECT_EQ(d.bit, c.bit);
  EXPECT_EQ(d.cond, c.cond);
  EXPECT_EQ(d.load_bytes, c.load_bytes);
  EXPECT_EQ(d.offset, c.offset);
  EXPECT_TRUE(can_probe(d));
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Arm64Words, Arm64DecodeSimulated,
    ::testing::Values(
        // b .+8
        SimulatedCase{"b_forward", 0x14000002, Op::kB, 0, false, 0, 0, 0, 8},
        // b .-8
        SimulatedCase{"b_back", 0x17fffffe, Op::kB, 0, false, 0, 0, 0, -8},
        // b .+0x7fffffc
        SimulatedCase{"b_max", 0x15ffffff, Op::kB, 0, false, 0, 0, 0, 0x7fffffc},
        // b .-0x8000000
        SimulatedCase{"b_min", 0x16000000, Op::kB, 0, false, 0, 0, 0, -0x8000000},
        // bl .+0x100
        SimulatedCase{"bl_forward", 0x94000040, Op::kBl, 0, false, 0, 0, 0, 0x100},
        // bl .-4
        SimulatedCase{"bl_back", 0x97ffffff, Op::kBl, 0, false, 0, 0, 0, -4},
        // b.ne .+8
        SimulatedCase{"b_ne", 0x54000041, Op::kBCond, 0, false, 0, 1, 0, 8},
        // b.eq .-0x100000
        SimulatedCase{"b_eq_min", 0x54800000, Op::kBCond, 0, false, 0, 0, 0, -0x100000},
        // b.al .+4
        SimulatedCase{"b_al", 0x5400002e, Op::kBCond, 0, false, 0, 14, 0, 4},
        // b.nv .+12
        SimulatedCase{"b_nv", 0x5400006f, Op::kBCond, 0, false, 0, 15, 0, 12},
        // bc.eq .+8
        SimulatedCase{"bc_eq", 0x54000050, Op::kBCond, 0, false, 0, 0, 0, 8},
        // cbz w3, .+16
        SimulatedCase{"cbz_w", 0x34000083, Op::kCbz, 3, false, 0, 0, 0, 16},
        // cbz x3, .-16
        SimulatedCase{"cbz_x_back", 0xb4ffff83, Op::kCbz, 3, true, 0, 0, 0, -16},
        // cbnz w30, .+0xffffc
        SimulatedCase{"cbnz_w_max", 0x357ffffe, Op::kCbnz, 30, false, 0, 0, 0, 0xffffc},
        // cbnz x0, .-0x100000
        SimulatedCase{"cbnz_x_min", 0xb5800000, Op::kCbnz, 0, true, 0, 0, 0, -0x100000},
        // tbz w5, #0, .+8
        SimulatedCase{"tbz_bit0", 0x36000045, Op::kTbz, 5, false, 0, 0, 0, 8},
        // tbz x5, #63, .-8
        SimulatedCase{"tbz_bit63", 0xb6ffffc5, Op::kTbz, 5, true, 63, 0, 0, -8},
        // tbnz x30, #32, .+0x7ffc
        SimulatedCase{"tbnz_bit32_max", 0xb703fffe, Op::kTbnz, 30, true, 32, 0, 0, 0x7ffc},
        // tbnz w1, #31, .-0x8000
        SimulatedCase{"tbnz_bit31_min", 0x37fc0001, Op::kTbnz, 1, false, 31, 0, 0, -0x8000},
        // adr x0, .+1
        SimulatedCase{"adr_plus1", 0x30000000, Op::kAdr, 0, false, 0, 0, 0, 1},
        // adr x17, .-1
        SimulatedCase{"adr_minus1", 0x70fffff1, Op::kAdr, 17, false, 0, 0, 0, -1},
        // adr x1, .+0xfffff
        SimulatedCase{"adr_max", 0x707fffe1, Op::kAdr, 1, false, 0, 0, 0, 0xfffff},
        // adr x2, .-0x100000
        SimulatedCase{"adr_min", 0x10800002, Op::kAdr, 2, false, 0, 0, 0, -0x100000},
        // adrp x3, .+0x1000
        SimulatedCase{"adrp_next_page", 0xb0000003, Op::kAdrp, 3, false, 0, 0, 0, 0x1000},
        // adrp x4, .-0x1000
        SimulatedCase{"adrp_prev_page", 0xf0ffffe4, Op::kAdrp, 4, false, 0, 0, 0, -0x1000},
        // adrp x5, .+0xfffff000
        SimulatedCase{"adrp_max", 0xf07fffe5, Op::kAdrp, 5, false, 0, 0, 0, 0xfffff000},
        // adrp x6, .-0x100000000
        SimulatedCase{"adrp_min", 0x90800006, Op::kAdrp, 6, false, 0, 0, 0, -0x100000000},
        // adrp xzr, .+0x3000
        SimulatedCase{"adrp_xzr", 0xf000001f, Op::kAdrp, 31, false, 0, 0, 0, 0x3000},
        // ldr w7, .+8
        SimulatedCase{"ldr_w", 0x18000047, Op::kLdrLiteral, 7, false, 0, 0, 4, 8},
        // ldr x8, .-8
        SimulatedCase{"ldr_x_back", 0x58ffffc8, Op::kLdrLiteral, 8, true, 0, 0, 8, -8},
        // ldrsw x9, .+0xffffc
        SimulatedCase{"ldrsw_max", 0x987fffe9, Op::kLdrswLiteral, 9, true, 0, 0, 4, 0xffffc},
        // prfm pldl1keep, .-0x100000
        SimulatedCase{"prfm_min", 0xd8800000, Op::kPrfmLiteral, 0, false, 0, 0, 0, -0x100000},
        // br x3
        SimulatedCase{"br", 0xd61f0060, Op::kBr, 3, false, 0, 0, 0, 0},
        // br xzr
        SimulatedCase{"br_xzr", 0xd61f03e0, Op::kBr, 31, false, 0, 0, 0, 0},
        // blr x30
        SimulatedCase{"blr_x30", 0xd63f03c0, Op::kBlr, 30, false, 0, 0, 0, 0},
        SimulatedCase{"ret", 0xd65f03c0, Op::kRet, 30, false, 0, 0, 0, 0},                    // ret
        // ret x2
        SimulatedCase{"ret_x2", 0xd65f0040, Op::kRet, 2, false, 0, 0, 0, 0}),
    CaseName());
// clang-format on

// ---- Refused, and why

struct RejectCase {
  const char* name;
  uint32_t word;
  const char* reason;  // how the reason starts
};

class Arm64DecodeRejected : public ::testing::TestWithParam<RejectCase> {};

TEST_P(Arm64DecodeRejected, GivesTheReason) {
  const RejectCase& c = GetParam();
  const Decoded d = decode_insn(c.word);
  EXPECT_EQ(d.cls, InsnClass::kReject);
  EXPECT_FALSE(can_probe(d));
  EXPECT_EQ(d.op, Op::kNone);
  EXPECT_THAT(d.reason, StartsWith(c.reason));
}

constexpr const char* kExclusive = "exclusive load/store: ";
constexpr const char* kUndefined = "undefined instruction (unallocated encoding)";
constexpr const char* kPac = "pointer-authenticated branch";
constexpr const char* kMsr = "msr: writes a system register";
constexpr const char* kMrs = "mrs: reads a system register";
constexpr const char* kMsrImm = "msr (immediate)";
constexpr const char* kWait = "wait or event hint";
constexpr const char* kAut = "aut* hint";
constexpr const char* kHint = "hint the kernel's probes refuse";
constexpr const char* kTme = "transactional memory";
constexpr const char* kMops = "memory copy/set";
constexpr const char* kOtherBranch = "branch dprobe does not simulate";

// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Arm64Exclusives, Arm64DecodeRejected,
    ::testing::Values(
        RejectCase{"ldxr_w", 0x885f7c20, kExclusive},    // ldxr w0, [x1]
        RejectCase{"ldxr_x", 0xc85f7c20, kExclusive},    // ldxr x0, [x1]
        RejectCase{"ldxrb", 0x085f7c20, kExclusive},     // ldxrb w0, [x1]
        RejectCase{"ldxrh", 0x485f7c20, kExclusive},     // ldxrh w0, [x1]
        RejectCase{"ldaxr_x", 0xc85ffc62, kExclusive},   // ldaxr x2, [x3]
        RejectCase{"ldaxrb", 0x085ffc62, kExclusive},    // ldaxrb w2, [x3]
        RejectCase{"stxr_x", 0xc8047cc5, kExclusive},    // stxr w4, x5, [x6]
        RejectCase{"stxrb", 0x08047cc5, kExclusive},     // stxrb w4, w5, [x6]
        RejectCase{"stxrh", 0x48047cc5, kExclusive},     // stxrh w4, w5, [x6]
        RejectCase{"stlxr_w", 0x8804fcc5, kExclusive},   // stlxr w4, w5, [x6]
        RejectCase{"stlxr_x", 0xc804fcc5, kExclusive},   // stlxr w4, x5, [x6]
        RejectCase{"ldxp_x", 0xc87f0440, kExclusive},    // ldxp x0, x1, [x2]
        RejectCase{"ldxp_w", 0x887f0440, kExclusive},    // ldxp w0, w1, [x2]
        RejectCase{"ldaxp_x", 0xc87f8440, kExclusive},   // ldaxp x0, x1, [x2]
        RejectCase{"stxp_x", 0xc8230440, kExclusive},    // stxp w3, x0, x1, [x2]
        RejectCase{"stlxp_w", 0x88238440, kExclusive}),  // stlxp w3, w0, w1, [x2]
    CaseName());

INSTANTIATE_TEST_SUITE_P(
    Arm64Exceptions, Arm64DecodeRejected,
    ::testing::Values(
        // svc #0
        RejectCase{"svc", 0xd4000001, "svc: a system call out of line is not supported yet"},
        RejectCase{"hvc", 0xd4000022, "hvc/smc"},                // hvc #1
        RejectCase{"smc", 0xd4000043, "hvc/smc"},                // smc #2
        RejectCase{"brk", 0xd4200000, "brk: a breakpoint"},      // brk #0
        RejectCase{"brk_1000", 0xd4207d00, "brk: a breakpoint"}, // brk #0x3e8
        RejectCase{"hlt", 0xd45e0000, "hlt"},                    // hlt #0xf000
        RejectCase{"dcps1", 0xd4a00001, "dcps1/2/3"},            // dcps1
        RejectCase{"dcps2", 0xd4a00002, "dcps1/2/3"},            // dcps2
        RejectCase{"dcps3", 0xd4a00003, "dcps1/2/3"},            // dcps3
        RejectCase{"tcancel", 0xd4600020, kTme},                 // tcancel #1
        RejectCase{"eret", 0xd69f03e0, "eret/eretaa/eretab"},    // eret
        RejectCase{"eretaa", 0xd69f0bff, "eret/eretaa/eretab"},  // eretaa
        RejectCase{"eretab", 0xd69f0fff, "eret/eretaa/eretab"},  // eretab
        RejectCase{"drps", 0xd6bf03e0, "drps"},                  // drps
        // Unallocated in the exception space: LL = 0 under opc = 000, op2 != 0.
        RejectCase{"svc_ll0", 0xd4000000, kUndefined},
        RejectCase{"brk_op2", 0xd4200004, kUndefined},
        RejectCase{"dcps0", 0xd4a00000, kUndefined},
        RejectCase{"exception_opc7", 0xd4e00000, kUndefined}),
    CaseName());

INSTANTIATE_TEST_SUITE_P(
    Arm64SystemRegisters, Arm64DecodeRejected,
    ::testing::Values(
        RejectCase{"msr_daifset", 0xd50342df, kMsrImm},     // msr daifset, #2
        RejectCase{"msr_spsel", 0xd50041bf, kMsrImm},       // msr spsel, #1
        RejectCase{"msr_ssbs", 0xd503413f, kMsrImm},        // msr ssbs, #1
        RejectCase{"smstart", 0xd503477f, kMsrImm},         // smstart
        RejectCase{"msr_tpidrro", 0xd51bd063, kMsr},        // msr tpidrro_el0, x3
        RejectCase{"msr_sctlr", 0xd5181000, kMsr},          // msr sctlr_el1, x0
        RejectCase{"msr_daif", 0xd51b4220, kMsr},           // msr daif, x0
        RejectCase{"mrs_daif", 0xd53b422c, kMrs},           // mrs x12, daif
        RejectCase{"mrs_sctlr", 0xd538100d, kMrs},          // mrs x13, sctlr_el1
        RejectCase{"mrs_cntpct", 0xd53be02e, kMrs},         // mrs x14, cntpct_el0
        RejectCase{"mrs_tpidr_el1", 0xd538d090, kMrs},      // mrs x16, tpidr_el1
        RejectCase{"mrs_id_crm1", 0xd5380100, kMrs},        // mrs x0, id_pfr0_el1 (CRm = 1)
        RejectCase{"mrs_id_crm8", 0xd5380800, kMrs},        // mrs x0, s3_0_c0_c8_0
        // msrr s2_0_c0_c0_0, x0, x1, by hand (as 2.40 lacks FEAT_D128)
        RejectCase{"msrr", 0xd5500000, "msrr/mrrs/sysp"},
        RejectCase{"system_space_10", 0xd5800000, kUndefined},
        RejectCase{"tstart", 0xd5233060, kTme},             // tstart x0
        RejectCase{"ttest", 0xd5233161, kTme},              // ttest x1
        RejectCase{"tcommit", 0xd503307f, kTme},            // tcommit
        RejectCase{"barrier_op2_0", 0xd503301f, kUndefined},
        RejectCase{"sysl_op0_0", 0xd5200000, kUndefined},
        RejectCase{"op0_0_crn5", 0xd503501f, kUndefined}),
    CaseName());

INSTANTIATE_TEST_SUITE_P(
    Arm64Hints, Arm64DecodeRejected,
    ::testing::Values(
        RejectCase{"yield", 0xd503203f, kWait},      // yield
        RejectCase{"wfe", 0xd503205f, kWait},        // wfe
        RejectCase{"wfi", 0xd503207f, kWait},        // wfi
        RejectCase{"sev", 0xd503209f, kWait},        // sev
        RejectCase{"sevl", 0xd50320bf, kWait},       // sevl
        RejectCase{"wfet", 0xd5031000, kWait},       // wfet x0
        RejectCase{"wfit", 0xd5031021, kWait},       // wfit x1
        RejectCase{"autia1716", 0xd503219f, kAut},   // autia1716
        RejectCase{"autib1716", 0xd50321df, kAut},   // autib1716
        RejectCase{"autiaz", 0xd503239f, kAut},      // autiaz
        RejectCase{"autiasp", 0xd50323bf, kAut},     // autiasp
        RejectCase{"autibz", 0xd50323df, kAut},      // autibz
        RejectCase{"autibsp", 0xd50323ff, kAut},     // autibsp
        RejectCase{"esb", 0xd503221f, kHint},        // esb
        RejectCase{"psb", 0xd503223f, kHint},        // psb csync
        RejectCase{"tsb", 0xd503225f, kHint},        // tsb csync
        RejectCase{"csdb", 0xd503229f, kHint},       // csdb
        RejectCase{"hint_127", 0xd5032fff, kHint}),  // hint #0x7f
    CaseName());

INSTANTIATE_TEST_SUITE_P(
    Arm64Branches, Arm64DecodeRejected,
    ::testing::Values(
        RejectCase{"braa", 0xd71f0801, kPac},        // braa x0, x1
        RejectCase{"brab", 0xd71f0c1f, kPac},        // brab x0, sp
        RejectCase{"braaz", 0xd61f085f, kPac},       // braaz x2
        RejectCase{"brabz", 0xd61f0c5f, kPac},       // brabz x2
        RejectCase{"blraa", 0xd73f0864, kPac},       // blraa x3, x4
        RejectCase{"blrab", 0xd73f0c64, kPac},       // blrab x3, x4
        RejectCase{"blraaz", 0xd63f08bf, kPac},      // blraaz x5
        RejectCase{"blrabz", 0xd63f0cbf, kPac},      // blrabz x5
        RejectCase{"retaa", 0xd65f0bff, kPac},       // retaa
        RejectCase{"retab", 0xd65f0fff, kPac},       // retab
        // Hand-made: B.cond with o1 = 1, the spaces after it, an op2 other
        // than 11111 in a register branch, and FEAT_CMPBR's space.
        RejectCase{"bcond_o1", 0x55000000, kOtherBranch},
        RejectCase{"op0_010_bit25", 0x56000000, kOtherBranch},
        RejectCase{"br_op2", 0xd61e0060, kOtherBranch},
        RejectCase{"br_op4", 0xd61f0061, kOtherBranch},
        RejectCase{"branch_register_opc3", 0xd67f03c0, kOtherBranch},
        RejectCase{"cmpbr_space", 0x74000000, kOtherBranch},
        RejectCase{"op0_111", 0xf4000000, kOtherBranch}),
    CaseName());

INSTANTIATE_TEST_SUITE_P(
    Arm64Others, Arm64DecodeRejected,
    ::testing::Values(
        RejectCase{"ldr_s", 0x1c000040, "ldr (literal) to a SIMD&FP register"},  // ldr s0, .+8
        RejectCase{"ldr_d", 0x5c000041, "ldr (literal) to a SIMD&FP register"},  // ldr d1, .+8
        RejectCase{"ldr_q", 0x9cffffc2, "ldr (literal) to a SIMD&FP register"},  // ldr q2, .-8
        RejectCase{"ldr_literal_v_opc3", 0xdc000000, kUndefined},  // opc = 11, V = 1: unallocated
        RejectCase{"cpyp", 0x1d010440, kMops},                     // cpyp [x0]!, [x1]!, x2!
        RejectCase{"cpym", 0x1d410440, kMops},                     // cpym [x0]!, [x1]!, x2!
        RejectCase{"cpye", 0x1d810440, kMops},                     // cpye [x0]!, [x1]!, x2!
        RejectCase{"cpyfp", 0x19010440, kMops},                    // cpyfp [x0]!, [x1]!, x2!
        RejectCase{"setp", 0x19c20420, kMops},                     // setp [x0]!, x1!, x2
        RejectCase{"setm", 0x19c24420, kMops},                     // setm [x0]!, x1!, x2
        RejectCase{"sete", 0x19c28420, kMops},                     // sete [x0]!, x1!, x2
        RejectCase{"setgp", 0x1dc20420, kMops},                    // setgp [x0]!, x1!, x2
        RejectCase{"udf_0", 0x00000000, "undefined instruction (udf)"},       // udf #0
        RejectCase{"udf_ffff", 0x0000ffff, "undefined instruction (udf)"},    // udf #65535
        RejectCase{"reserved", 0x00010000, kUndefined},
        RejectCase{"unallocated_0001", 0x02000000, kUndefined},
        RejectCase{"unallocated_0011", 0x86000000, kUndefined}),
    CaseName());
// clang-format on

// ---- Stepped out of line

struct StepCase {
  const char* name;
  uint32_t word;
};

class Arm64DecodeOutOfLine : public ::testing::TestWithParam<StepCase> {};

TEST_P(Arm64DecodeOutOfLine, Steps) {
  const Decoded d = decode_insn(GetParam().word);
  EXPECT_EQ(d.cls, InsnClass::kOutOfLine) << d.reason;
  EXPECT_EQ(d.op, Op::kNone);
  EXPECT_STREQ(d.reason, "");
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Arm64Words, Arm64DecodeOutOfLine,
    ::testing::Values(
        StepCase{"add_imm", 0x91004020},        // add x0, x1, #0x10
        StepCase{"add_shifted", 0x0b020c20},    // add w0, w1, w2, lsl #3
        StepCase{"sub_sp", 0xd10103ff},         // sub sp, sp, #0x40
        StepCase{"mov_from_sp", 0x910003fd},    // mov x29, sp
        StepCase{"mov", 0xaa1303e0},            // mov x0, x19
        StepCase{"movz", 0xd2a24681},           // mov x1, #0x12340000
        StepCase{"ldr_register", 0xf8627820},   // ldr x0, [x1, x2, lsl #3]
        StepCase{"ldr_imm", 0xb9400fe3},        // ldr w3, [sp, #12]
        StepCase{"str_pre", 0xf81f0ffe},        // str x30, [sp, #-16]!
        StepCase{"stp_pre", 0xa9be7bfd},        // stp x29, x30, [sp, #-32]!
        StepCase{"ldp_post", 0xa8c27bfd},       // ldp x29, x30, [sp], #32
        StepCase{"ldrb_post", 0x38401420},      // ldrb w0, [x1], #1
        StepCase{"mul", 0x9b027c20},            // mul x0, x1, x2
        StepCase{"madd", 0x1b051883},           // madd w3, w4, w5, w6
        StepCase{"fadd", 0x1e622820},           // fadd d0, d1, d2
        StepCase{"fmul_vector", 0x6e22dc20},    // fmul v0.4s, v1.4s, v2.4s
        StepCase{"ld1", 0x4c407000},            // ld1 {v0.16b}, [x0]
        StepCase{"cmp", 0xf100141f},            // cmp x0, #0x5
        StepCase{"csel", 0x9a821020},           // csel x0, x1, x2, ne
        StepCase{"ubfx", 0xd3442c20},           // ubfx x0, x1, #4, #8
        StepCase{"ldadd", 0xf8200041},          // ldadd x0, x1, [x2]
        StepCase{"ldar", 0xc8dffc20},           // ldar x0, [x1]
        StepCase{"stlr", 0x889ffc20},           // stlr w0, [x1]
        StepCase{"cas", 0x88a07c41},            // cas w0, w1, [x2]
        StepCase{"casp", 0x48207c82},           // casp x0, x1, x2, x3, [x4]
        StepCase{"caspal", 0x0860fc82},         // caspal w0, w1, w2, w3, [x4]
        StepCase{"sve_ldr", 0x85804000},        // ldr z0, [x0]
        StepCase{"sve_add", 0x04e20020},        // add z0.d, z1.d, z2.d
        StepCase{"sme_space", 0x80000000},      // op0 = 1, op1 = 0000 (hand-made)
        StepCase{"nop", 0xd503201f},            // nop
        StepCase{"xpaclri", 0xd50320ff},        // xpaclri
        StepCase{"pacia1716", 0xd503211f},      // pacia1716
        StepCase{"pacib1716", 0xd503215f},      // pacib1716
        StepCase{"paciaz", 0xd503231f},         // paciaz
        StepCase{"paciasp", 0xd503233f},        // paciasp
        StepCase{"pacibz", 0xd503235f},         // pacibz
        StepCase{"pacibsp", 0xd503237f},        // pacibsp
        StepCase{"bti", 0xd503241f},            // bti
        StepCase{"bti_c", 0xd503245f},          // bti c
        StepCase{"bti_j", 0xd503249f},          // bti j
        StepCase{"bti_jc", 0xd50324df},         // bti jc
        StepCase{"clrex", 0xd5033f5f},          // clrex
        StepCase{"dmb", 0xd5033bbf},            // dmb ish
        StepCase{"dsb", 0xd5033f9f},            // dsb sy
        StepCase{"isb", 0xd5033fdf},            // isb
        StepCase{"sb", 0xd50330ff},             // sb
        StepCase{"ssbb", 0xd503309f},           // ssbb
        StepCase{"pssbb", 0xd503349f},          // pssbb
        StepCase{"dsb_nxs", 0xd5033a3f},        // dsb ishnxs
        StepCase{"cfinv", 0xd500401f},          // cfinv
        StepCase{"xaflag", 0xd500403f},         // xaflag
        StepCase{"axflag", 0xd500405f},         // axflag
        StepCase{"dc_zva", 0xd50b7420},         // dc zva, x0
        StepCase{"dc_civac", 0xd50b7e21},       // dc civac, x1
        StepCase{"ic_ivau", 0xd50b7522},        // ic ivau, x2
        StepCase{"msr_nzcv", 0xd51b4200},       // msr nzcv, x0
        StepCase{"msr_fpcr", 0xd51b4401},       // msr fpcr, x1
        StepCase{"msr_fpsr", 0xd51b4422},       // msr fpsr, x2
        StepCase{"msr_tpidr", 0xd51bd043},      // msr tpidr_el0, x3
        StepCase{"mrs_nzcv", 0xd53b4200},       // mrs x0, nzcv
        StepCase{"mrs_fpcr", 0xd53b4401},       // mrs x1, fpcr
        StepCase{"mrs_fpsr", 0xd53b4422},       // mrs x2, fpsr
        StepCase{"mrs_tpidr", 0xd53bd043},      // mrs x3, tpidr_el0
        StepCase{"mrs_tpidrro", 0xd53bd064},    // mrs x4, tpidrro_el0
        StepCase{"mrs_cntvct", 0xd53be045},     // mrs x5, cntvct_el0
        StepCase{"mrs_cntfrq", 0xd53be006},     // mrs x6, cntfrq_el0
        StepCase{"mrs_dczid", 0xd53b00e7},      // mrs x7, dczid_el0
        StepCase{"mrs_ctr", 0xd53b0028},        // mrs x8, ctr_el0
        StepCase{"mrs_midr", 0xd5380009},       // mrs x9, midr_el1
        StepCase{"mrs_mpidr", 0xd53800ab},      // mrs x11, mpidr_el1
        StepCase{"mrs_id_aa64isar0", 0xd538060a}),  // mrs x10, id_aa64isar0_el1
    CaseName());
// clang-format on

// ---- A probe inside an LDXR...STXR sequence

constexpr uint32_t kLdaxr = 0xc85ffc62;   // ldaxr x2, [x3]
constexpr uint32_t kLdxp = 0xc87f0440;    // ldxp x0, x1, [x2]
constexpr uint32_t kStlxr = 0x8804fcc5;   // stlxr w4, w5, [x6]
constexpr uint32_t kStxp = 0xc8230440;    // stxp w3, x0, x1, [x2]
constexpr uint32_t kClrex = 0xd5033f5f;   // clrex
constexpr uint32_t kClrex5 = 0xd503355f;  // clrex #5
constexpr uint32_t kAdd = 0x91004020;     // add x0, x1, #0x10
constexpr uint32_t kCbnz = 0x35ffffa4;    // cbnz w4, .-12
constexpr uint32_t kLdar = 0xc8dffc20;    // ldar x0, [x1]
constexpr uint32_t kStlr = 0x889ffc20;    // stlr w0, [x1]
constexpr uint32_t kCasp = 0x48207c82;    // casp x0, x1, x2, x3, [x4]

TEST(Arm64ExclusiveSequence, EmptyOrPlainCodeIsOutside) {
  EXPECT_FALSE(in_exclusive_sequence({}));
  const std::vector<uint32_t> plain(40, kAdd);
  EXPECT_FALSE(in_exclusive_sequence(plain));
}

TEST(Arm64ExclusiveSequence, AfterTheLoadIsInside) {
  const std::vector<uint32_t> words = {kAdd, kLdaxr};
  EXPECT_TRUE(in_exclusive_sequence(words));
  const std::vector<uint32_t> later = {kLdaxr, kAdd, kAdd};
  EXPECT_TRUE(in_exclusive_sequence(later));
  const std::vector<uint32_t> pair = {kLdxp, kAdd};
  EXPECT_TRUE(in_exclusive_sequence(pair));
}

// The loop: ldaxr; add; stlxr; cbnz back. A probe on the add or the stlxr
// is inside; on the cbnz or after it, outside.
TEST(Arm64ExclusiveSequence, LoopBodyInsideAfterStoreOutside) {
  const std::vector<uint32_t> loop = {kAdd, kLdaxr, kAdd, kStlxr, kCbnz, kAdd};
  const std::span<const uint32_t> all(loop);
  EXPECT_FALSE(in_exclusive_sequence(all.first(1)));  // probe on ldaxr: itself refused
  EXPECT_TRUE(in_exclusive_sequence(all.first(2)));   // on the add
  EXPECT_TRUE(in_exclusive_sequence(all.first(3)));   // on the stlxr
  EXPECT_FALSE(in_exclusive_sequence(all.first(4)));  // on the cbnz
  EXPECT_FALSE(in_exclusive_sequence(all.first(5)));
  EXPECT_FALSE(in_exclusive_sequence(all));
}

TEST(Arm64ExclusiveSequence, StorePairEndsIt) {
  const std::vector<uint32_t> words = {kLdxp, kAdd, kStxp, kAdd};
  EXPECT_FALSE(in_exclusive_sequence(words));
}

TEST(Arm64ExclusiveSequence, ClrexEndsIt) {
  const std::vector<uint32_t> words = {kLdaxr, kAdd, kClrex, kAdd};
  EXPECT_FALSE(in_exclusive_sequence(words));
  const std::vector<uint32_t> with_imm = {kLdaxr, kClrex5};
  EXPECT_FALSE(in_exclusive_sequence(with_imm));
}

// Only the nearest 32 words count: a load-exclusive 32 words back is seen,
// 33 words back is not.
TEST(Arm64ExclusiveSequence, LooksBack32Words) {
  std::vector<uint32_t> words(kExclusiveScanWords, kAdd);
  words.front() = kLdaxr;
  EXPECT_TRUE(in_exclusive_sequence(words));
  words.push_back(kAdd);
  EXPECT_FALSE(in_exclusive_sequence(words));
}

// Acquire/release loads and stores and CASP share the exclusives' space
// but are single instructions: they neither start nor end a sequence.
TEST(Arm64ExclusiveSequence, OrderedAndCaspAreNotExclusive) {
  const std::vector<uint32_t> loads = {kAdd, kLdar, kCasp};
  EXPECT_FALSE(in_exclusive_sequence(loads));
  const std::vector<uint32_t> store_inside = {kLdaxr, kStlr, kCasp};
  EXPECT_TRUE(in_exclusive_sequence(store_inside));
}

}  // namespace
}  // namespace dprobe::arch::arm64
