// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/eh_frame_entries.h"

#include "base/hit_path.h"
#include "core/eh_reader.h"  // dw_eh_pe: the DW_EH_PE_* values

namespace dprobe::core::unwinding {
namespace {

constexpr uint32_t kCieId = 0;  // in .eh_frame (.debug_frame's is all ones)
// Lengths from here up mean a 64-bit entry (0xffffffff) or are reserved.
constexpr uint64_t kLength64 = 0xfffffff0;
// The augmentation letters the unwinder knows, 'z' first: enough room.
constexpr int kMaxAugmentation = 8;

// An entry's first field; `end` gets where its content ends.
DPROBE_HIT_PATH bool entry_bounds(Cursor& c, uint64_t& end) {
  const uint64_t length = c.fixed(4);
  if (!c.ok() || length == 0 || length >= kLength64) return false;
  end = c.at() + length;
  c.limit(end);
  return true;
}

DPROBE_HIT_PATH bool read_augmentation_string(Cursor& c, char (&text)[kMaxAugmentation]) {
  for (int i = 0; i < kMaxAugmentation; ++i) {
    text[i] = static_cast<char>(c.u8());
    if (text[i] == 0) return c.ok();
  }
  return false;
}

// The augmentation data a 'z' CIE describes; stops at letters whose data
// it could not step over (the length covers them, but the letters after
// one could not be read).
DPROBE_HIT_PATH bool read_augmentation_data(Cursor& c, const char* letters, Cie& cie) {
  const uint64_t length = c.uleb();
  const uint64_t data_begin = c.at();
  for (const char* letter = letters; *letter != 0; ++letter) {
    switch (*letter) {
      case 'R':
        cie.fde_encoding = c.u8();
        break;
      case 'L':
        c.u8();  // the LSDA's encoding: for exception handling only
        break;
      case 'P':
        c.skip_pointer(c.u8());
        break;
      case 'S':
        cie.signal_frame = true;
        break;
      case 'B':  // arm64: branch target identification
      case 'G':  // arm64: memory tagging
        break;
      default:
        return false;
    }
  }
  const uint64_t used = c.at() - data_begin;
  if (used > length) return false;
  c.skip(length - used);
  return c.ok();
}

DPROBE_HIT_PATH bool parse_cie(Tables& tables, uint64_t address, Cie& cie) {
  cie = Cie{};
  Cursor c(tables.cie_bytes, address, address + 4);
  uint64_t end = 0;
  if (!entry_bounds(c, end) || c.fixed(4) != kCieId) return false;
  const uint8_t version = c.u8();
  char augmentation[kMaxAugmentation];
  if ((version != 1 && version != 3 && version != 4) ||
      !read_augmentation_string(c, augmentation)) {
    return false;
  }
  if (version == 4) c.fixed(2);  // address and segment selector sizes
  cie.code_align = c.uleb();
  cie.data_align = c.sleb();
  cie.ra_column = version == 1 ? c.u8() : c.uleb();
  if (augmentation[0] == 'z') {
    cie.augmented = true;
    if (!read_augmentation_data(c, augmentation + 1, cie)) return false;
  } else if (augmentation[0] != 0) {
    return false;  // "eh" and the like: data of unknown size follows
  }
  cie.insns = c.at();
  cie.insns_end = end;
  if (!c.ok()) return false;
  cie.address = address;
  return true;
}

}  // namespace

DPROBE_HIT_PATH bool ByteCache::fill(uint64_t address) noexcept {
  valid_ = 0;
  const uint64_t base = address & ~(kWindow - 1);
  if (!memory_(data_, base, kWindow)) return false;
  base_ = base;
  valid_ = kWindow;
  return true;
}

// A word the window does not hold, or not all of: byte by byte, through
// new windows.
DPROBE_HIT_PATH bool ByteCache::word_across(uint64_t address, uint64_t& out) noexcept {
  uint8_t bytes[8];
  for (uint64_t i = 0; i < 8; ++i) {
    if (!byte(address + i, bytes[i])) return false;
  }
  __builtin_memcpy(&out, bytes, 8);
  return true;
}

// The bytes after a first one with its high bit set.
DPROBE_HIT_PATH uint64_t Cursor::uleb_rest(uint8_t first) noexcept {
  uint64_t result = first & 0x7fu;
  for (uint64_t i = 1; i < kMaxLebBytes; ++i) {
    const uint8_t byte = u8();
    result |= uint64_t{byte & 0x7fu} << (7 * i);
    if ((byte & 0x80) == 0) return result;
  }
  ok_ = false;
  return 0;
}

DPROBE_HIT_PATH int64_t Cursor::sleb_rest(uint8_t first) noexcept {
  uint64_t result = first & 0x7fu;
  for (uint64_t i = 1; i < kMaxLebBytes; ++i) {
    const uint8_t byte = u8();
    result |= uint64_t{byte & 0x7fu} << (7 * i);
    if ((byte & 0x80) == 0) {
      const auto bits = static_cast<uint32_t>(7 * (i + 1));
      return static_cast<int64_t>((byte & 0x40) != 0 ? sign_extend(result, bits) : result);
    }
  }
  ok_ = false;
  return 0;
}

DPROBE_HIT_PATH uint64_t Cursor::value(uint8_t encoding) noexcept {
  switch (encoding & dw_eh_pe::kFormatMask) {
    case 0x00:  // absptr
    case 0x04:  // udata8
    case 0x0c:  // sdata8
      return fixed(8);
    case 0x01:
      return uleb();
    case 0x02:
      return fixed(2);
    case 0x03:
      return fixed(4);
    case 0x09:
      return static_cast<uint64_t>(sleb());
    case 0x0a:
      return sign_extend(fixed(2), 16);
    case 0x0b:
      return sign_extend(fixed(4), 32);
    default:
      ok_ = false;
      return 0;
  }
}

DPROBE_HIT_PATH uint64_t Cursor::pointer(uint8_t encoding) noexcept {
  const uint64_t field = at_;
  const uint64_t stored = value(encoding);
  // textrel, datarel and funcrel have no base an FDE knows; an indirect
  // code address is not something compilers write.
  if ((encoding & dw_eh_pe::kIndirect) != 0 || encoding == dw_eh_pe::kOmit) ok_ = false;
  switch (encoding & dw_eh_pe::kApplicationMask) {
    case 0:
      return stored;
    case dw_eh_pe::kPcrel:
      return field + stored;
    default:
      ok_ = false;
      return 0;
  }
}

DPROBE_HIT_PATH void Cursor::skip_pointer(uint8_t encoding) noexcept {
  if (encoding == dw_eh_pe::kOmit) return;
  if ((encoding & dw_eh_pe::kApplicationMask) == dw_eh_pe::kAligned) {
    seek((at_ + 7) & ~uint64_t{7});
    fixed(8);
    return;
  }
  value(encoding);
}

DPROBE_HIT_PATH bool parse_fde(Tables& tables, uint64_t address, Cie& cie, Fde& fde) noexcept {
  Cursor c(tables.fde_bytes, address, address + 4);
  uint64_t end = 0;
  if (!entry_bounds(c, end)) return false;
  const uint64_t field = c.at();
  const uint64_t back = c.fixed(4);  // to its CIE, from this field
  if (!c.ok() || back == kCieId) return false;
  if (cie.address != field - back && !parse_cie(tables, field - back, cie)) return false;
  fde.pc_begin = c.pointer(cie.fde_encoding);
  fde.pc_end = fde.pc_begin + c.value(cie.fde_encoding);  // a length: no base
  if (cie.augmented) c.skip(c.uleb());
  fde.insns = c.at();
  fde.insns_end = end;
  return c.ok() && fde.pc_end > fde.pc_begin;
}

}  // namespace dprobe::core::unwinding
