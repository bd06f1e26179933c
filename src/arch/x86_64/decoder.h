// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// x86_64 instruction decoding (64-bit mode, through Zydis), a one-line
// disassembly for messages, and the instruction-boundary check that the
// kernel answers with EILSEQ: a probe must sit on the first byte of an
// instruction, found by decoding linearly from the function's start.
//
//   auto insn = decode_insn(code, 0x401136);
//   if (insn) puts(disassemble(*insn).c_str());  // 0x401136: 48 89 e5  mov rbp, rsp
//
//   auto ok = check_boundary(function_bytes, function_address, probe_address);
//   if (!ok) report(ok.error().listing());
//
// Not for the hit path: these allocate.
#ifndef DPROBE_ARCH_X86_64_DECODER_H_
#define DPROBE_ARCH_X86_64_DECODER_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"

namespace dprobe::arch::x86_64 {

// The architectural maximum length of one instruction.
inline constexpr size_t kMaxInsnLength = 15;

// One decoded instruction: where it is and its bytes (zero past `length`).
struct Insn {
  uint64_t address = 0;
  uint8_t length = 0;
  std::array<uint8_t, kMaxInsnLength> bytes{};
};

// Decodes the instruction at the start of `code`, which sits at `address`.
// The error says why the bytes are not an instruction.
Result<Insn, std::string> decode_insn(std::span<const uint8_t> code, uint64_t address);

// "0x401136: 48 89 e5             mov rbp, rsp": Intel syntax, branch and
// RIP-relative targets as absolute addresses, "(bad)" for bytes that do not
// decode.
std::string disassemble(const Insn& insn);

// Why a probe address is not on an instruction boundary.
struct BoundaryError {
  uint64_t probe_address = 0;
  // Up to 3 instructions before the one holding the probe, that one, and up
  // to 2 after. When `undecodable`, the last entry is not an instruction but
  // the bytes (up to 7) where decoding stopped before reaching the probe.
  std::vector<Insn> around;
  bool undecodable = false;

  // One line per entry (see disassemble), "> " marking the instruction that
  // holds the probe (or the undecodable bytes), with what went wrong noted.
  std::string listing() const;
};

// Succeeds when `probe_address` is the first byte of an instruction of the
// function whose bytes are `function_code`, starting at `function_address`.
// The function's start itself always succeeds.
Result<void, BoundaryError> check_boundary(std::span<const uint8_t> function_code,
                                           uint64_t function_address, uint64_t probe_address);

}  // namespace dprobe::arch::x86_64

#endif  // DPROBE_ARCH_X86_64_DECODER_H_
