// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The few A64 encodings the engine writes (slots and trampolines), from
// the Arm Architecture Reference Manual's encoding tables. Register 31 is
// sp where an instruction's base or the add/sub operand takes it, xzr
// elsewhere. Offsets are checked by the callers: each encoder masks its
// field and nothing more.
#ifndef DPROBE_ARCH_ARM64_ENCODE_H_
#define DPROBE_ARCH_ARM64_ENCODE_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace dprobe::arch::arm64::encode {

inline constexpr uint32_t kNop = 0xd503201fu;

// B from `from` to `to` (±128 MiB).
constexpr uint32_t b(uint64_t from, uint64_t to) {
  return 0x14000000u | (static_cast<uint32_t>(static_cast<int64_t>(to - from) >> 2) & 0x03ffffffu);
}
constexpr bool within_b_reach(uint64_t from, uint64_t to) {
  const auto offset = static_cast<int64_t>(to - from);
  return offset >= -(int64_t{1} << 27) && offset < (int64_t{1} << 27);
}

constexpr uint32_t br(uint32_t rn) { return 0xd61f0000u | rn << 5; }
constexpr uint32_t blr(uint32_t rn) { return 0xd63f0000u | rn << 5; }

// LDR Xt, label: a literal `offset` bytes from the instruction (±1 MiB, a
// multiple of 4).
constexpr uint32_t ldr_literal_x(uint32_t rt, int64_t offset) {
  return 0x58000000u | (static_cast<uint32_t>(offset >> 2) & 0x7ffffu) << 5 | rt;
}

// Loads from [Xn] with no offset.
constexpr uint32_t ldr_w_base(uint32_t rt, uint32_t rn) { return 0xb9400000u | rn << 5 | rt; }
constexpr uint32_t ldr_x_base(uint32_t rt, uint32_t rn) { return 0xf9400000u | rn << 5 | rt; }
constexpr uint32_t ldrsw_base(uint32_t rt, uint32_t rn) { return 0xb9800000u | rn << 5 | rt; }

// STP/LDP Xt1, Xt2, [Xn, #offset] (a multiple of 8, -512..504).
constexpr uint32_t stp_x(uint32_t rt, uint32_t rt2, uint32_t rn, int32_t offset) {
  return 0xa9000000u | (static_cast<uint32_t>(offset / 8) & 0x7fu) << 15 | rt2 << 10 | rn << 5 | rt;
}
constexpr uint32_t ldp_x(uint32_t rt, uint32_t rt2, uint32_t rn, int32_t offset) {
  return stp_x(rt, rt2, rn, offset) | 0x00400000u;
}
// STR/LDR Xt, [Xn, #offset] (a multiple of 8, 0..32760).
constexpr uint32_t str_x(uint32_t rt, uint32_t rn, uint32_t offset) {
  return 0xf9000000u | (offset / 8) << 10 | rn << 5 | rt;
}
constexpr uint32_t ldr_x(uint32_t rt, uint32_t rn, uint32_t offset) {
  return str_x(rt, rn, offset) | 0x00400000u;
}

// ADD/SUB Xd, Xn, #imm (0..4095; Xd and Xn may be sp).
constexpr uint32_t add_imm(uint32_t rd, uint32_t rn, uint32_t imm) {
  return 0x91000000u | imm << 10 | rn << 5 | rd;
}
constexpr uint32_t sub_imm(uint32_t rd, uint32_t rn, uint32_t imm) {
  return 0xd1000000u | imm << 10 | rn << 5 | rd;
}

// MRS Xt, NZCV and MSR NZCV, Xt.
constexpr uint32_t mrs_nzcv(uint32_t rt) { return 0xd53b4200u | rt; }
constexpr uint32_t msr_nzcv(uint32_t rt) { return 0xd51b4200u | rt; }

// A conditional branch (B.cond, BC.cond, CBZ, CBNZ: imm19 at bit 5; TBZ,
// TBNZ: imm14 at bit 5) with its offset replaced by `offset` bytes.
constexpr uint32_t with_imm19(uint32_t word, int64_t offset) {
  return (word & ~(0x7ffffu << 5)) | (static_cast<uint32_t>(offset >> 2) & 0x7ffffu) << 5;
}
constexpr uint32_t with_imm14(uint32_t word, int64_t offset) {
  return (word & ~(0x3fffu << 5)) | (static_cast<uint32_t>(offset >> 2) & 0x3fffu) << 5;
}

inline void put_word(std::span<uint8_t> out, size_t at, uint32_t word) {
  for (size_t i = 0; i < 4; ++i) out[at + i] = static_cast<uint8_t>(word >> (8 * i));
}
inline void put_quad(std::span<uint8_t> out, size_t at, uint64_t value) {
  for (size_t i = 0; i < 8; ++i) out[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

}  // namespace dprobe::arch::arm64::encode

#endif  // DPROBE_ARCH_ARM64_ENCODE_H_
