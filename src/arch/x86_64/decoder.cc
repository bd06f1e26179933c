// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/x86_64/decoder.h"

#include <algorithm>

#include "arch/x86_64/zydis_decode.h"

namespace dprobe::arch::x86_64 {
namespace {

// objdump's layout: the bytes of up to 7-byte instructions line up the
// mnemonics; longer ones push it right.
constexpr size_t kBytesColumn = 20;
// Context kept around the instruction that swallows a probe.
constexpr size_t kBefore = 3;
constexpr size_t kAfter = 2;
// Bytes shown where decoding stopped: enough to recognise, fits the column.
constexpr size_t kUndecodableShown = 7;

constexpr char kHexDigits[] = "0123456789abcdef";

std::string hex(uint64_t value) {
  std::string digits;
  do {
    digits.push_back(kHexDigits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  std::reverse(digits.begin(), digits.end());
  return "0x" + digits;
}

std::string hex_bytes(const Insn& insn) {
  std::string text;
  for (size_t i = 0; i < insn.length; ++i) {
    if (i != 0) text.push_back(' ');
    text.push_back(kHexDigits[insn.bytes[i] >> 4]);
    text.push_back(kHexDigits[insn.bytes[i] & 0xf]);
  }
  return text;
}

const ZydisFormatter& intel_formatter() {
  static const ZydisFormatter formatter = [] {
    ZydisFormatter f;
    ZydisFormatterInit(&f, ZYDIS_FORMATTER_STYLE_INTEL);
    ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE);
    ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE,
                              ZYDIS_PADDING_DISABLED);
    ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_DISP_PADDING, ZYDIS_PADDING_DISABLED);
    ZydisFormatterSetProperty(&f, ZYDIS_FORMATTER_PROP_IMM_PADDING, ZYDIS_PADDING_DISABLED);
    return f;
  }();
  return formatter;
}

std::string mnemonic_and_operands(const Insn& insn) {
  ZydisDecoded d;
  std::span<const uint8_t> code(insn.bytes.data(), insn.length);
  if (decode_zydis(code, d) != kZydisOk || d.insn.length != insn.length) return "(bad)";
  char text[256];
  if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&intel_formatter(), &d.insn, d.operands,
                                                    d.insn.operand_count_visible, text,
                                                    sizeof(text), insn.address, nullptr))) {
    return "(bad)";
  }
  return text;
}

// The bytes where decoding stopped, shown as a pseudo-instruction.
Insn undecodable_at(std::span<const uint8_t> code, uint64_t address) {
  Insn bad;
  bad.address = address;
  bad.length = static_cast<uint8_t>(std::min(code.size(), kUndecodableShown));
  std::copy_n(code.begin(), bad.length, bad.bytes.begin());
  return bad;
}

void keep_last(std::vector<Insn>& window, const Insn& insn) {
  if (window.size() == kBefore) window.erase(window.begin());
  window.push_back(insn);
}

// Appends up to kAfter instructions following `offset`, stopping quietly at
// the end of the code or at bytes that do not decode.
void append_following(std::span<const uint8_t> code, uint64_t function_address, size_t offset,
                      std::vector<Insn>& around) {
  for (size_t n = 0; n < kAfter && offset < code.size(); ++n) {
    auto next = decode_insn(code.subspan(offset), function_address + offset);
    if (!next) return;
    around.push_back(*next);
    offset += next->length;
  }
}

}  // namespace

Result<Insn, std::string> decode_insn(std::span<const uint8_t> code, uint64_t address) {
  if (code.empty()) return unexpected("no bytes to decode at " + hex(address));
  ZydisDecoded d;
  ZyanStatus status = decode_zydis(code.first(std::min(code.size(), kMaxInsnLength)), d);
  if (status != kZydisOk) {
    return unexpected("cannot decode the instruction at " + hex(address) + ": " +
                      zydis_status_text(status));
  }
  Insn insn;
  insn.address = address;
  insn.length = d.insn.length;
  std::copy_n(code.begin(), insn.length, insn.bytes.begin());
  return insn;
}

std::string disassemble(const Insn& insn) {
  std::string bytes = hex_bytes(insn);
  if (bytes.size() < kBytesColumn) bytes.resize(kBytesColumn, ' ');
  return hex(insn.address) + ": " + bytes + " " + mnemonic_and_operands(insn);
}

std::string BoundaryError::listing() const {
  if (around.empty()) return "probe " + hex(probe_address) + " is outside the function's code";
  std::string text;
  for (size_t i = 0; i < around.size(); ++i) {
    const Insn& insn = around[i];
    bool marked = undecodable
                      ? i + 1 == around.size()
                      : probe_address > insn.address && probe_address < insn.address + insn.length;
    if (i != 0) text.push_back('\n');
    text += marked ? "> " : "  ";
    text += disassemble(insn);
    if (!marked) continue;
    if (undecodable) {
      text += "  <- cannot decode here, before the probe at " + hex(probe_address);
    } else {
      text += "  <- probe at +" + hex(probe_address - insn.address);
    }
  }
  return text;
}

Result<void, BoundaryError> check_boundary(std::span<const uint8_t> function_code,
                                           uint64_t function_address, uint64_t probe_address) {
  if (probe_address == function_address) return {};
  BoundaryError error{probe_address, {}, false};
  if (probe_address < function_address || probe_address - function_address >= function_code.size())
    return unexpected(std::move(error));
  const size_t probe_offset = probe_address - function_address;
  std::vector<Insn> before;
  size_t offset = 0;
  while (offset < probe_offset) {
    auto insn = decode_insn(function_code.subspan(offset), function_address + offset);
    if (!insn) {
      error.around = std::move(before);
      error.around.push_back(
          undecodable_at(function_code.subspan(offset), function_address + offset));
      error.undecodable = true;
      return unexpected(std::move(error));
    }
    if (offset + insn->length > probe_offset) {
      error.around = std::move(before);
      error.around.push_back(*insn);
      append_following(function_code, function_address, offset + insn->length, error.around);
      return unexpected(std::move(error));
    }
    keep_last(before, *insn);
    offset += insn->length;
  }
  return {};
}

}  // namespace dprobe::arch::x86_64
