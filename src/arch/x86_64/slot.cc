// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/x86_64/slot.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace dprobe::arch::x86_64 {
namespace {

constexpr size_t kJmpRel32Length = 5;      // e9 rel32
constexpr size_t kJmpAbsoluteLength = 14;  // ff 25 00000000, then the 8-byte target

// The signed distance from `from` to `to`; user addresses are below 2^47,
// so the difference of two never overflows int64.
int64_t distance(uint64_t from, uint64_t to) { return static_cast<int64_t>(to - from); }

bool fits_int32(int64_t value) {
  return value >= std::numeric_limits<int32_t>::min() &&
         value <= std::numeric_limits<int32_t>::max();
}

void put_le(std::span<uint8_t> out, size_t at, uint64_t value, size_t size) {
  for (size_t i = 0; i < size; ++i) out[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

std::string too_far(const Insn& insn, const Classified& c, uint64_t slot_address, int64_t disp) {
  char text[256];
  const double mib = static_cast<double>(disp) / (1024.0 * 1024.0);
  std::snprintf(text, sizeof(text),
                "the instruction at 0x%llx refers to 0x%llx, which is %+.1f MiB from the slot "
                "at 0x%llx: beyond the +/-2048 MiB a RIP-relative disp32 reaches",
                static_cast<unsigned long long>(insn.address),
                static_cast<unsigned long long>(c.rip_target), mib,
                static_cast<unsigned long long>(slot_address));
  return text;
}

size_t write_jump_back(std::span<uint8_t> out, size_t at, uint64_t from, uint64_t to) {
  const int64_t rel = distance(from + kJmpRel32Length, to);
  if (fits_int32(rel)) {
    out[at] = 0xe9;
    put_le(out, at + 1, static_cast<uint64_t>(rel), 4);
    return kJmpRel32Length;
  }
  // jmp qword [rip+0]: the target is the 8 bytes right after the jump.
  constexpr uint8_t kJmpRipIndirect[] = {0xff, 0x25, 0x00, 0x00, 0x00, 0x00};
  std::copy(std::begin(kJmpRipIndirect), std::end(kJmpRipIndirect), out.subspan(at).begin());
  put_le(out, at + sizeof(kJmpRipIndirect), to, 8);
  return kJmpAbsoluteLength;
}

}  // namespace

Result<size_t, std::string> write_out_of_line_slot(const Insn& insn, const Classified& c,
                                                   uint64_t slot_address, std::span<uint8_t> out) {
  if (c.cls != InsnClass::kOutOfLine) {
    return unexpected(std::string("only an out-of-line instruction gets a slot"));
  }
  const size_t worst = size_t{insn.length} + kJmpAbsoluteLength;
  if (out.size() < worst) {
    return unexpected("the slot buffer holds " + std::to_string(out.size()) + " bytes, needs " +
                      std::to_string(worst));
  }
  std::copy_n(insn.bytes.begin(), insn.length, out.begin());
  const uint64_t slot_next = slot_address + insn.length;
  if (c.rip_relative) {
    const int64_t disp = distance(slot_next, c.rip_target);
    if (!fits_int32(disp)) return unexpected(too_far(insn, c, slot_address, disp));
    put_le(out, c.disp_offset, static_cast<uint64_t>(disp), 4);
  }
  return insn.length + write_jump_back(out, insn.length, slot_next, insn.address + insn.length);
}

}  // namespace dprobe::arch::x86_64
