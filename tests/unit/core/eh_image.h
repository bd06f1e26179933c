// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A hand-assembled image of unwind tables in this process's memory, which
// landing_pads() reads as it reads a loaded object's: .eh_frame_hdr at the
// start, then regions for .eh_frame, LSDAs, pointer slots and "text". The
// text region's addresses are only numbers (pc_begin, landing pads): never
// read. Pointers are written in any DW_EH_PE_* encoding from the addresses
// they name, so a test states targets, not offsets.
#ifndef DPROBE_TESTS_UNIT_CORE_EH_IMAGE_H_
#define DPROBE_TESTS_UNIT_CORE_EH_IMAGE_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/eh_reader.h"

namespace dprobe::core {

class EhImage {
 public:
  static constexpr size_t kHdr = 0;
  static constexpr size_t kEhFrame = 0x400;
  static constexpr size_t kLsda = 0x1000;
  static constexpr size_t kSlots = 0x1800;
  static constexpr size_t kText = 0x2000;

  EhImage() = default;
  EhImage(const EhImage&) = delete;  // addresses are the buffer's own
  EhImage& operator=(const EhImage&) = delete;

  uint64_t address(size_t offset) const {
    return reinterpret_cast<uintptr_t>(bytes_.data()) + offset;
  }
  uint64_t here() const { return address(cursor_); }
  size_t offset() const { return cursor_; }
  void seek(size_t offset) { cursor_ = offset; }

  template <typename T>
  void put(T value) {
    std::memcpy(&bytes_.at(cursor_), &value, sizeof value);
    cursor_ += sizeof value;
  }
  void u8(uint8_t value) { put(value); }
  void text(std::string_view letters) {
    for (const char letter : letters) u8(static_cast<uint8_t>(letter));
    u8(0);
  }
  void uleb(uint64_t value) {
    do {
      const auto low = static_cast<uint8_t>(value & 0x7f);
      value >>= 7;
      u8(value != 0 ? static_cast<uint8_t>(low | 0x80) : low);
    } while (value != 0);
  }
  void sleb(int64_t value) {
    for (;;) {
      const auto low = static_cast<uint8_t>(static_cast<uint64_t>(value) & 0x7f);
      value >>= 7;  // arithmetic: keeps the sign
      const bool done = (value == 0 && (low & 0x40) == 0) || (value == -1 && (low & 0x40) != 0);
      u8(done ? low : static_cast<uint8_t>(low | 0x80));
      if (done) return;
    }
  }
  // Overwrites one byte already written (a length known only afterwards).
  void patch(size_t offset, uint8_t value) { bytes_.at(offset) = value; }

  // `number` in the format part of `encoding`, nothing applied.
  void value(uint8_t encoding, uint64_t number) {
    switch (encoding & dw_eh_pe::kFormatMask) {
      case dw_eh_pe::kUleb128:
        return uleb(number);
      case dw_eh_pe::kSleb128:
        return sleb(static_cast<int64_t>(number));
      case dw_eh_pe::kUdata2:
      case dw_eh_pe::kSdata2:
        return put(static_cast<uint16_t>(number));
      case dw_eh_pe::kUdata4:
      case dw_eh_pe::kSdata4:
        return put(static_cast<uint32_t>(number));
      default:
        return put(number);
    }
  }

  // `target` stored in `encoding`: pcrel from this field, datarel from
  // .eh_frame_hdr, funcrel from `function`, aligned as a pointer slot.
  // With kIndirect, `target` is the slot that holds the real pointer.
  void pointer(uint8_t encoding, uint64_t target, uint64_t function = 0) {
    uint64_t base = 0;
    switch (encoding & dw_eh_pe::kApplicationMask) {
      case dw_eh_pe::kPcrel:
        base = here();
        break;
      case dw_eh_pe::kDatarel:
        base = address(kHdr);
        break;
      case dw_eh_pe::kFuncrel:
        base = function;
        break;
      case dw_eh_pe::kAligned:
        while (here() % 8 != 0) u8(0);
        return put(target);
      default:
        break;
    }
    value(encoding, target - base);
  }

  // A pointer slot holding `pointee`, for indirect encodings.
  uint64_t slot(uint64_t pointee) {
    const size_t saved = cursor_;
    cursor_ = kSlots + 8 * slots_++;
    put(pointee);
    const uint64_t at = address(cursor_ - 8);
    cursor_ = saved;
    return at;
  }

 private:
  alignas(16) std::array<uint8_t, 0x3000> bytes_{};
  size_t cursor_ = 0;
  size_t slots_ = 0;
};

}  // namespace dprobe::core

#endif  // DPROBE_TESTS_UNIT_CORE_EH_IMAGE_H_
