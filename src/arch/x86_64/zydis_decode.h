// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Internal to arch/x86_64: the one place that sets Zydis up, so every part
// decodes in the same mode. Core code never includes this (nor Zydis).
//
//   ZydisDecoded d;
//   if (decode_zydis(code, d) == kZydisOk) use(d.insn.mnemonic, d.operands);
#ifndef DPROBE_ARCH_X86_64_ZYDIS_DECODE_H_
#define DPROBE_ARCH_X86_64_ZYDIS_DECODE_H_

#include <Zydis/Zydis.h>

#include <cstdint>
#include <span>

namespace dprobe::arch::x86_64 {

struct ZydisDecoded {
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
};

inline constexpr ZyanStatus kZydisOk = ZYAN_STATUS_SUCCESS;

// 64-bit mode with Zydis's default (Intel) branch semantics: 0x66 does not
// shorten a near branch's displacement, as on the CPUs dprobe runs on.
ZyanStatus decode_zydis(std::span<const uint8_t> code, ZydisDecoded& out);

// Why Zydis refused the bytes, for humans.
const char* zydis_status_text(ZyanStatus status);

}  // namespace dprobe::arch::x86_64

#endif  // DPROBE_ARCH_X86_64_ZYDIS_DECODE_H_
