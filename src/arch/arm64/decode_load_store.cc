// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Loads and stores (word<28:25> = x1x0): the literal loads, which read
// PC-relative memory and are simulated; the exclusives and the memory
// copy/set sequences, which must not be broken up by a trap; the rest
// steps. Also the scan for a probe inside an LDXR...STXR sequence.
#include <cstddef>
#include <cstdint>
#include <span>

#include "arch/arm64/decode_groups.h"

namespace dprobe::arch::arm64 {
namespace {

constexpr const char* kExclusive =
    "exclusive load/store: a breakpoint trap inside an LDXR/STXR sequence clears the exclusive "
    "monitor, and the loop would never succeed";
constexpr const char* kVectorLiteral =
    "ldr (literal) to a SIMD&FP register: the saved registers hold no vector registers";
constexpr const char* kMemoryCopySet =
    "memory copy/set (cpy*, set*): its prologue, main and epilogue must run consecutively in "
    "place";

constexpr uint32_t kClrexMask = 0xfffff0ff;
constexpr uint32_t kClrex = 0xd503305f;  // CLREX #CRm

// Load register (literal): opc<31:30> 011 V<26> 00 imm19<23:5> Rt<4:0>.
bool is_literal_load(uint32_t word) { return (word & 0x3b000000) == 0x18000000; }

// Load/store exclusive register and pair: size<31:30> 001000 o2<23>=0
// L<22> o1<21> ...; with o1 = 1 only size = 1x is an exclusive pair,
// size = 0x is CASP.
bool is_exclusive(uint32_t word) {
  if ((word & 0x3f800000) != 0x08000000) return false;
  return !bit_set(word, 21) || bit_set(word, 31);
}

// CPY*/SET*: size<31:30>=00 011 o0<26> 01 op1<23:22> 0 ... op2<15:12> 01.
bool is_memory_copy_set(uint32_t word) { return (word & 0xfb200c00) == 0x19000400; }

// opc selects LDR Wt, LDR Xt, LDRSW, PRFM; for SIMD&FP (V = 1) S, D, Q.
Decoded decode_literal_load(uint32_t word) {
  if (bit_set(word, 26)) {
    return reject(field(word, 31, 30) == 0b11 ? kUndefined : kVectorLiteral);
  }
  constexpr Op kOps[] = {Op::kLdrLiteral, Op::kLdrLiteral, Op::kLdrswLiteral, Op::kPrfmLiteral};
  constexpr uint8_t kBytes[] = {4, 8, 4, 0};
  const uint32_t opc = field(word, 31, 30);
  Decoded d = simulated(kOps[opc]);
  d.wide = opc == 1 || opc == 2;  // LDR Xt, LDRSW Xt
  d.load_bytes = kBytes[opc];
  d.reg = static_cast<uint8_t>(field(word, 4, 0));
  d.offset = sign_extend(field(word, 23, 5), 19) * 4;
  return d;
}

bool is_load_exclusive(uint32_t word) { return is_exclusive(word) && bit_set(word, 22); }

// A store-exclusive or CLREX ends a sequence.
bool ends_exclusive_sequence(uint32_t word) {
  return (is_exclusive(word) && !bit_set(word, 22)) || (word & kClrexMask) == kClrex;
}

}  // namespace

Decoded decode_load_store(uint32_t word) {
  if (is_literal_load(word)) return decode_literal_load(word);
  if (is_exclusive(word)) return reject(kExclusive);
  if (is_memory_copy_set(word)) return reject(kMemoryCopySet);
  return out_of_line();
}

bool in_exclusive_sequence(std::span<const uint32_t> preceding) {
  const size_t scanned =
      preceding.size() < kExclusiveScanWords ? preceding.size() : kExclusiveScanWords;
  for (size_t i = 1; i <= scanned; ++i) {
    const uint32_t word = preceding[preceding.size() - i];
    if (ends_exclusive_sequence(word)) return false;
    if (is_load_exclusive(word)) return true;
  }
  return false;
}

}  // namespace dprobe::arch::arm64
