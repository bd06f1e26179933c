// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/x86_64/zydis_decode.h"

namespace dprobe::arch::x86_64 {

ZyanStatus decode_zydis(std::span<const uint8_t> code, ZydisDecoded& out) {
  ZydisDecoder decoder;
  ZyanStatus status = ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  if (!ZYAN_SUCCESS(status)) return status;
  return ZydisDecoderDecodeFull(&decoder, code.data(), code.size(), &out.insn, out.operands);
}

const char* zydis_status_text(ZyanStatus status) {
  switch (status) {
    case ZYDIS_STATUS_NO_MORE_DATA:
      return "the bytes end inside the instruction";
    case ZYDIS_STATUS_DECODING_ERROR:
      return "invalid or undefined encoding";
    case ZYDIS_STATUS_INSTRUCTION_TOO_LONG:
      return "longer than 15 bytes";
    case ZYDIS_STATUS_BAD_REGISTER:
      return "invalid register operand";
    case ZYDIS_STATUS_ILLEGAL_LOCK:
      return "lock prefix on an instruction that does not allow it";
    case ZYDIS_STATUS_ILLEGAL_LEGACY_PFX:
      return "legacy prefix before a VEX/EVEX/XOP prefix";
    case ZYDIS_STATUS_ILLEGAL_REX:
      return "REX prefix before a VEX/EVEX/XOP prefix";
    case ZYDIS_STATUS_INVALID_MAP:
      return "invalid opcode map";
    case ZYDIS_STATUS_MALFORMED_EVEX:
      return "malformed EVEX prefix";
    case ZYDIS_STATUS_MALFORMED_MVEX:
      return "malformed MVEX prefix";
    case ZYDIS_STATUS_INVALID_MASK:
      return "invalid mask register";
    default:
      return "undecodable";
  }
}

}  // namespace dprobe::arch::x86_64
