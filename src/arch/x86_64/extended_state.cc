// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// touches_extended_state (optimize.h): what a jump-optimized hit must never
// run, because saving the state it changes costs more than the hit.
#include "arch/x86_64/optimize.h"
#include "arch/x86_64/zydis_decode.h"

namespace dprobe::arch::x86_64 {
namespace {

bool is_extended_register(ZydisRegister reg) {
  switch (ZydisRegisterGetClass(reg)) {
    case ZYDIS_REGCLASS_X87:
    case ZYDIS_REGCLASS_MMX:
    case ZYDIS_REGCLASS_XMM:
    case ZYDIS_REGCLASS_YMM:
    case ZYDIS_REGCLASS_ZMM:
    case ZYDIS_REGCLASS_TMM:
    case ZYDIS_REGCLASS_MASK:
      return true;
    default:
      return reg == ZYDIS_REGISTER_MXCSR || reg == ZYDIS_REGISTER_X87CONTROL ||
             reg == ZYDIS_REGISTER_X87STATUS || reg == ZYDIS_REGISTER_X87TAG ||
             reg == ZYDIS_REGISTER_XCR0;
  }
}

// Instruction sets that work on that state even where no operand shows it
// (emms, vzeroupper, fxsave, xsave, ldmxcsr).
bool is_extended_isa(ZydisISAExt ext) {
  switch (ext) {
    case ZYDIS_ISA_EXT_X87:
    case ZYDIS_ISA_EXT_MMX:
    case ZYDIS_ISA_EXT_AMD3DNOW:
    case ZYDIS_ISA_EXT_SSE:
    case ZYDIS_ISA_EXT_SSE2:
    case ZYDIS_ISA_EXT_SSE3:
    case ZYDIS_ISA_EXT_SSSE3:
    case ZYDIS_ISA_EXT_SSE4:
    case ZYDIS_ISA_EXT_SSE4A:
    case ZYDIS_ISA_EXT_AVX:
    case ZYDIS_ISA_EXT_AVX2:
    case ZYDIS_ISA_EXT_AVX2GATHER:
    case ZYDIS_ISA_EXT_AVX512EVEX:
    case ZYDIS_ISA_EXT_AVX512VEX:
    case ZYDIS_ISA_EXT_AVXAES:
    case ZYDIS_ISA_EXT_AVX_VNNI:
    case ZYDIS_ISA_EXT_F16C:
    case ZYDIS_ISA_EXT_FMA:
    case ZYDIS_ISA_EXT_FMA4:
    case ZYDIS_ISA_EXT_XOP:
    case ZYDIS_ISA_EXT_XSAVE:
    case ZYDIS_ISA_EXT_XSAVEC:
    case ZYDIS_ISA_EXT_XSAVEOPT:
    case ZYDIS_ISA_EXT_XSAVES:
    case ZYDIS_ISA_EXT_AMX_BF16:
    case ZYDIS_ISA_EXT_AMX_INT8:
    case ZYDIS_ISA_EXT_AMX_TILE:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool touches_extended_state(const Insn& insn) {
  ZydisDecoded d;
  // Bytes that do not decode could be anything: say yes, never guess.
  if (decode_zydis({insn.bytes.data(), insn.length}, d) != kZydisOk) return true;
  if (is_extended_isa(d.insn.meta.isa_ext)) return true;
  if (d.insn.mnemonic == ZYDIS_MNEMONIC_FXSAVE || d.insn.mnemonic == ZYDIS_MNEMONIC_FXSAVE64 ||
      d.insn.mnemonic == ZYDIS_MNEMONIC_FXRSTOR || d.insn.mnemonic == ZYDIS_MNEMONIC_FXRSTOR64) {
    return true;
  }
  for (size_t i = 0; i < d.insn.operand_count; ++i) {
    const ZydisDecodedOperand& op = d.operands[i];
    if (op.type == ZYDIS_OPERAND_TYPE_REGISTER && is_extended_register(op.reg.value)) return true;
  }
  return false;
}

}  // namespace dprobe::arch::x86_64
