// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// decode_insn's pieces, one per encoding group of the Arm ARM's top-level
// table, and the bit helpers they share. Internal to arch/arm64.
#ifndef DPROBE_ARCH_ARM64_DECODE_GROUPS_H_
#define DPROBE_ARCH_ARM64_DECODE_GROUPS_H_

#include <cstdint>

#include "arch/arm64/decode.h"

namespace dprobe::arch::arm64 {

// word<hi:lo>, as the Arm ARM writes fields.
constexpr uint32_t field(uint32_t word, unsigned hi, unsigned lo) {
  return (word >> lo) & ((uint32_t{1} << (hi - lo + 1)) - 1);
}

constexpr bool bit_set(uint32_t word, unsigned n) { return ((word >> n) & 1) != 0; }

// The low `width` bits of `value`, sign-extended.
constexpr int64_t sign_extend(uint32_t value, unsigned width) {
  const int64_t sign = int64_t{1} << (width - 1);
  const int64_t low = static_cast<int64_t>(value) & ((sign << 1) - 1);
  return (low ^ sign) - sign;
}

inline constexpr const char* kUndefined = "undefined instruction (unallocated encoding)";

inline Decoded reject(const char* reason) {
  Decoded d;
  d.reason = reason;
  return d;
}

inline Decoded out_of_line() {
  Decoded d;
  d.cls = InsnClass::kOutOfLine;
  return d;
}

inline Decoded simulated(Op op) {
  Decoded d;
  d.cls = InsnClass::kSimulate;
  d.op = op;
  return d;
}

// word<31:25> = 1101010 and 1101011: exception generation, system
// instructions and registers, branches to a register (decode_system.cc).
Decoded decode_exception(uint32_t word);
Decoded decode_system(uint32_t word);
Decoded decode_branch_register(uint32_t word);

// word<28:25> = x1x0: loads and stores (decode_load_store.cc).
Decoded decode_load_store(uint32_t word);

}  // namespace dprobe::arch::arm64

#endif  // DPROBE_ARCH_ARM64_DECODE_GROUPS_H_
