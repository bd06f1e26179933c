// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The top-level encoding table (Arm ARM C4.1, op0 = word<31>, op1 =
// word<28:25>), the PC-relative data-processing instructions and the
// branches. Field layouts are quoted from the Arm ARM next to each decoder.
#include "arch/arm64/decode.h"

#include "arch/arm64/decode_groups.h"

namespace dprobe::arch::arm64 {
namespace {

constexpr const char* kUdf = "undefined instruction (udf): raises SIGILL on purpose";
constexpr const char* kPacBranch =
    "pointer-authenticated branch (braa, blraa, retaa, ...): authenticating the target needs "
    "the process's keys";
constexpr const char* kExceptionReturn = "eret/eretaa/eretab: exception return, EL1 and up only";
constexpr const char* kDrps = "drps: debug state instruction, undefined in user space";
// Compare-and-branch (FEAT_CMPBR), RETAASPPC (FEAT_PAuth_LR) and the
// unallocated rest of the branch space: PC-relative or unknown, so they
// cannot run from a slot.
constexpr const char* kOtherBranch =
    "branch dprobe does not simulate (a newer extension's, or unallocated)";

// Reserved space, op0 = 0: UDF #imm16 is word<31:16> = 0; the rest is
// unallocated.
Decoded decode_reserved(uint32_t word) {
  return reject(field(word, 31, 16) == 0 ? kUdf : kUndefined);
}

// ADR/ADRP: op immlo<30:29> 10000 immhi<23:5> Rd<4:0>; op = 1 is ADRP,
// whose immediate counts 4 KiB pages.
Decoded decode_pc_relative(uint32_t word) {
  const bool page = bit_set(word, 31);
  Decoded d = simulated(page ? Op::kAdrp : Op::kAdr);
  d.reg = static_cast<uint8_t>(field(word, 4, 0));
  const uint32_t imm = (field(word, 23, 5) << 2) | field(word, 30, 29);
  d.offset = sign_extend(imm, 21) * (page ? 4096 : 1);
  return d;
}

// Data processing (immediate): word<28:23> = 10000x is PC-relative
// addressing; everything else is plain arithmetic and steps.
Decoded decode_data_immediate(uint32_t word) {
  if (field(word, 28, 24) == 0b10000) return decode_pc_relative(word);
  return out_of_line();
}

// B/BL: op<31> 00101 imm26<25:0>.
Decoded decode_branch_immediate(uint32_t word) {
  Decoded d = simulated(bit_set(word, 31) ? Op::kBl : Op::kB);
  d.offset = sign_extend(field(word, 25, 0), 26) * 4;
  return d;
}

// CBZ/CBNZ: sf<31> 011010 op<24> imm19<23:5> Rt<4:0>.
Decoded decode_compare_branch(uint32_t word) {
  Decoded d = simulated(bit_set(word, 24) ? Op::kCbnz : Op::kCbz);
  d.wide = bit_set(word, 31);
  d.reg = static_cast<uint8_t>(field(word, 4, 0));
  d.offset = sign_extend(field(word, 23, 5), 19) * 4;
  return d;
}

// TBZ/TBNZ: b5<31> 011011 op<24> b40<23:19> imm14<18:5> Rt<4:0>; the bit
// tested is b5:b40.
Decoded decode_test_branch(uint32_t word) {
  Decoded d = simulated(bit_set(word, 24) ? Op::kTbnz : Op::kTbz);
  d.wide = bit_set(word, 31);
  d.bit = static_cast<uint8_t>((field(word, 31, 31) << 5) | field(word, 23, 19));
  d.reg = static_cast<uint8_t>(field(word, 4, 0));
  d.offset = sign_extend(field(word, 18, 5), 14) * 4;
  return d;
}

// B.cond/BC.cond: 0101010 o1<24> imm19<23:5> o0<4> cond<3:0>, o1 = 0.
// BC.cond (o0 = 1) only hints that the branch is consistent.
Decoded decode_conditional_branch(uint32_t word) {
  if (field(word, 25, 24) != 0) return reject(kOtherBranch);
  Decoded d = simulated(Op::kBCond);
  d.cond = static_cast<uint8_t>(field(word, 3, 0));
  d.offset = sign_extend(field(word, 23, 5), 19) * 4;
  return d;
}

// word<31:25> = 1101010: exception generation (word<24> = 0) or system
// (word<24> = 1); 1101011: branches to a register.
Decoded decode_exception_system_register_branch(uint32_t word) {
  if (bit_set(word, 25)) return decode_branch_register(word);
  return bit_set(word, 24) ? decode_system(word) : decode_exception(word);
}

// Branches, exception generation and system: op0 = word<31:29>.
Decoded decode_branch_group(uint32_t word) {
  switch (field(word, 31, 29)) {
    case 0b000:
    case 0b100:
      return decode_branch_immediate(word);
    case 0b001:
    case 0b101:
      return bit_set(word, 25) ? decode_test_branch(word) : decode_compare_branch(word);
    case 0b010:
      return decode_conditional_branch(word);
    case 0b110:
      return decode_exception_system_register_branch(word);
    default:
      return reject(kOtherBranch);
  }
}

// Which of BR/BLR/RET (opc 0..2 with op3 = 0, op4 = 0), or why not.
Decoded decode_plain_register_branch(uint32_t word, uint32_t opc) {
  constexpr Op kOps[] = {Op::kBr, Op::kBlr, Op::kRet};
  Decoded d = simulated(kOps[opc]);
  d.reg = static_cast<uint8_t>(field(word, 9, 5));
  return d;
}

// The pointer-authenticated forms: op3 = 00001x (key A or B).
bool is_authenticated(uint32_t word) { return field(word, 15, 11) == 0b00001; }

}  // namespace

// Unconditional branch (register): 1101011 opc<24:21> op2<20:16> op3<15:10>
// Rn<9:5> op4<4:0>, op2 = 11111.
Decoded decode_branch_register(uint32_t word) {
  const uint32_t opc = field(word, 24, 21);
  if (field(word, 20, 16) != 0b11111) return reject(kOtherBranch);
  const bool plain = field(word, 15, 10) == 0 && field(word, 4, 0) == 0;
  switch (opc) {
    case 0b0000:  // BR, BRAAZ, BRABZ
    case 0b0001:  // BLR, BLRAAZ, BLRABZ
    case 0b0010:  // RET, RETAA, RETAB
      if (plain) return decode_plain_register_branch(word, opc);
      return reject(is_authenticated(word) ? kPacBranch : kOtherBranch);
    case 0b1000:  // BRAA, BRAB
    case 0b1001:  // BLRAA, BLRAB
      return reject(is_authenticated(word) ? kPacBranch : kOtherBranch);
    case 0b0100:  // ERET, ERETAA, ERETAB
      return reject(kExceptionReturn);
    case 0b0101:
      return reject(kDrps);
    default:
      return reject(kOtherBranch);
  }
}

Decoded decode_insn(uint32_t word) {
  const uint32_t op1 = field(word, 28, 25);
  switch (op1) {
    case 0b0000:  // op0 = 1: SME
      return bit_set(word, 31) ? out_of_line() : decode_reserved(word);
    case 0b0001:
    case 0b0011:
      return reject(kUndefined);
    case 0b0010:  // SVE
      return out_of_line();
    case 0b1000:
    case 0b1001:
      return decode_data_immediate(word);
    case 0b1010:
    case 0b1011:
      return decode_branch_group(word);
    default:
      // x1x0: loads and stores; x101, x111: data processing (register,
      // SIMD&FP), which never depends on where it runs.
      if ((op1 & 0b0101) == 0b0100) return decode_load_store(word);
      return out_of_line();
  }
}

}  // namespace dprobe::arch::arm64
