// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Reading a loaded object's .eh_frame entries (CIE and FDE) in place, for
// the stack unwinder, through fault-safe reads: the bytes through a small
// window, DWARF numbers and DW_EH_PE_* pointers through a cursor that fails
// for good on anything wrong, and the CIE and FDE fields the unwinder uses.
//
//   Tables tables(memory);
//   Cie cie;  // kept from frame to frame: most share one CIE
//   Fde fde;
//   if (parse_fde(tables, fde_address, cie, fde)) ... run cie's, then fde's instructions
#ifndef DPROBE_CORE_EH_FRAME_ENTRIES_H_
#define DPROBE_CORE_EH_FRAME_ENTRIES_H_

#include <cstdint>

#include "base/hit_path.h"
#include "core/hit/unwind_memory.h"

namespace dprobe::core::unwinding {

// A 64-bit LEB128 number takes at most this many bytes.
inline constexpr uint64_t kMaxLebBytes = 10;

inline uint64_t sign_extend(uint64_t value, uint32_t bits) {
  if (bits >= 64) return value;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return (value ^ sign) - sign;
}

// The program's bytes through a window of one aligned 64-byte block (never
// across a page, so a block is readable when its first byte is): parsing an
// entry byte by byte costs a read per 64 bytes.
class ByteCache {
 public:
  explicit ByteCache(UnwindMemory memory) : memory_(memory) {}

  bool byte(uint64_t address, uint8_t& out) noexcept {
    if (address - base_ >= valid_ && !fill(address)) return false;
    out = data_[address - base_];
    return true;
  }
  // A little-endian word, from the window when it holds all of it.
  bool word(uint64_t address, uint64_t& out) noexcept {
    if (address - base_ >= valid_ || address - base_ + 8 > valid_) {
      // Across two windows: byte by byte.
      if ((address & (kWindow - 1)) > kWindow - 8) return word_across(address, out);
      if (!fill(address)) return false;
    }
    __builtin_memcpy(&out, data_ + (address - base_), 8);
    return true;
  }

 private:
  static constexpr uint64_t kWindow = 64;
  bool fill(uint64_t address) noexcept;
  bool word_across(uint64_t address, uint64_t& out) noexcept;

  UnwindMemory memory_;
  uint64_t base_ = 0;
  uint64_t valid_ = 0;  // 0 or kWindow
  uint8_t data_[kWindow];
};

// Reads DWARF data in [at, end): fixed-size little-endian numbers, LEB128,
// DW_EH_PE_* pointers. A failed read, a read past the end or a format it
// does not know make it fail for good: ok() is checked once at the end.
class Cursor {
 public:
  Cursor(ByteCache& bytes, uint64_t at, uint64_t end) : bytes_(bytes), at_(at), end_(end) {}

  bool ok() const { return ok_; }
  bool done() const { return at_ >= end_; }
  uint64_t at() const { return at_; }
  void limit(uint64_t end) { end_ = end; }
  void seek(uint64_t at) {
    if (at > end_) ok_ = false;
    at_ = at;
  }
  // Steps over `count` bytes, all of them before the end.
  void skip(uint64_t count) {
    if (at_ > end_ || count > end_ - at_) ok_ = false;
    if (ok_) at_ += count;
  }
  void fail() { ok_ = false; }

  uint8_t u8() noexcept {
    uint8_t byte = 0;
    if (!ok_ || at_ >= end_ || !bytes_.byte(at_, byte)) {
      ok_ = false;
      return 0;
    }
    ++at_;
    return byte;
  }
  uint64_t fixed(uint32_t size) noexcept {
    uint64_t value = 0;
    for (uint32_t i = 0; i < size; ++i) value |= uint64_t{u8()} << (8 * i);
    return value;
  }
  // One byte is the common case (register numbers, small offsets).
  DPROBE_HIT_PATH uint64_t uleb() noexcept {
    const uint8_t first = u8();
    return first < 0x80 ? first : uleb_rest(first);
  }
  int64_t sleb() noexcept {
    const uint8_t first = u8();
    if (first >= 0x80) return sleb_rest(first);
    return static_cast<int64_t>(sign_extend(first, 7));
  }
  // A value in the format bits of a DW_EH_PE encoding, no base applied.
  uint64_t value(uint8_t encoding) noexcept;
  // A code address in a DW_EH_PE encoding: absolute or pc-relative, the
  // only ones .eh_frame uses for them.
  uint64_t pointer(uint8_t encoding) noexcept;
  // Steps over a pointer without using it (a personality routine's).
  void skip_pointer(uint8_t encoding) noexcept;

 private:
  uint64_t uleb_rest(uint8_t first) noexcept;
  int64_t sleb_rest(uint8_t first) noexcept;

  ByteCache& bytes_;
  uint64_t at_;
  uint64_t end_;
  bool ok_ = true;
};

// What the unwinder takes from a CIE.
struct Cie {
  uint64_t address = 0;  // where it was read from; 0 while it is none
  uint64_t code_align = 1;
  int64_t data_align = 1;
  uint64_t ra_column = 0;
  uint8_t fde_encoding = 0;   // DW_EH_PE_absptr unless 'R' says
  bool augmented = false;     // 'z': FDEs carry an augmentation length
  bool signal_frame = false;  // 'S': the frame of a signal's return trampoline
  uint64_t insns = 0;         // its initial instructions [insns, insns_end)
  uint64_t insns_end = 0;
};

struct Fde {
  uint64_t pc_begin = 0;  // the code it covers: [pc_begin, pc_end)
  uint64_t pc_end = 0;
  uint64_t insns = 0;  // its instructions [insns, insns_end)
  uint64_t insns_end = 0;
};

// One window for FDEs and one for CIEs: an unwind reads both in turns.
struct Tables {
  explicit Tables(UnwindMemory memory) : fde_bytes(memory), cie_bytes(memory) {}
  ByteCache fde_bytes;
  ByteCache cie_bytes;
};

// The FDE at `address` and its CIE. False for anything else: a CIE, the
// terminator, 64-bit lengths, augmentations it cannot step over ("eh",
// unknown letters), unreadable bytes. A `cie` that holds the FDE's CIE
// already (an earlier frame's) is not read again.
bool parse_fde(Tables& tables, uint64_t address, Cie& cie, Fde& fde) noexcept;

}  // namespace dprobe::core::unwinding

#endif  // DPROBE_CORE_EH_FRAME_ENTRIES_H_
