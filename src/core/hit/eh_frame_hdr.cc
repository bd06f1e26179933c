// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/eh_frame_hdr.h"

#include "base/hit_path.h"

namespace dprobe::core {
namespace {

// DW_EH_PE_* values .eh_frame_hdr uses (LSB, "DWARF Extensions").
constexpr uint8_t kPeOmit = 0xff;
constexpr uint8_t kPeFormatMask = 0x0f;
constexpr uint8_t kPeApplicationMask = 0x70;
constexpr uint8_t kPeDatarelSdata4 = 0x3b;  // the search table's, as every linker writes it
constexpr uint8_t kHdrVersion = 1;
// Search table entries the binary search leaves to one read (64 bytes).
constexpr uint64_t kSearchWindow = 8;
// More FDEs than any object has: a header claiming more is garbage.
constexpr uint64_t kMaxFdes = uint64_t{1} << 26;

// The size of a fixed-size DW_EH_PE format; 0 for LEB128 and unknown ones,
// which a header never needs.
DPROBE_HIT_PATH uint64_t fixed_size(uint8_t encoding) {
  switch (encoding & kPeFormatMask) {
    case 0x02:  // udata2
    case 0x0a:  // sdata2
      return 2;
    case 0x03:  // udata4
    case 0x0b:  // sdata4
      return 4;
    case 0x00:  // absptr
    case 0x04:  // udata8
    case 0x0c:  // sdata8
      return 8;
    default:
      return 0;
  }
}

struct HdrHead {
  uint8_t version;
  uint8_t eh_frame_ptr_encoding;
  uint8_t fde_count_encoding;
  uint8_t table_encoding;
};

// The FDE count: a plain number (no base applied to a count).
DPROBE_HIT_PATH bool read_count(uint64_t at, uint8_t encoding, UnwindMemory memory,
                                uint64_t& count) {
  const uint64_t size = fixed_size(encoding);
  if (size == 0 || (encoding & kPeApplicationMask) != 0) return false;
  count = 0;
  return memory(&count, at, size);  // little-endian: the low bytes
}

DPROBE_HIT_PATH int32_t table_word(uint64_t table, uint64_t index, uint32_t word,
                                   UnwindMemory memory, bool& ok) {
  int32_t value = 0;
  ok = ok && memory(&value, table + index * 8 + word * 4, sizeof value);
  return value;
}

}  // namespace

std::optional<UnwindObject> describe_object(uint64_t text_begin, uint64_t text_end,
                                            uint64_t eh_frame_hdr, UnwindMemory memory) noexcept {
  HdrHead head{};
  if (eh_frame_hdr == 0 || !memory(&head, eh_frame_hdr, sizeof head)) return std::nullopt;
  if (head.version != kHdrVersion || head.table_encoding != kPeDatarelSdata4 ||
      head.fde_count_encoding == kPeOmit || head.eh_frame_ptr_encoding == kPeOmit) {
    return std::nullopt;
  }
  const uint64_t pointer_size = fixed_size(head.eh_frame_ptr_encoding);
  const uint64_t count_at = eh_frame_hdr + sizeof head + pointer_size;
  uint64_t count = 0;
  if (pointer_size == 0 || !read_count(count_at, head.fde_count_encoding, memory, count) ||
      count == 0 || count > kMaxFdes) {
    return std::nullopt;
  }
  const uint64_t table = count_at + fixed_size(head.fde_count_encoding);
  return UnwindObject{text_begin, text_end, eh_frame_hdr, table, count};
}

DPROBE_HIT_PATH uint64_t find_fde(const UnwindObject& object, uint64_t pc,
                                  UnwindMemory memory) noexcept {
  if (object.fde_count == 0) return 0;
  // Locations are relative to the header (datarel); compare them as such.
  const uint64_t hdr = object.eh_frame_hdr;
  const auto target = static_cast<int64_t>(pc - hdr);
  // Entries at or past hi start above pc; those past lo up to hi are not
  // known yet, nor is lo itself when it is 0. Halving stops at a window
  // that one read brings in.
  uint64_t lo = 0;
  uint64_t hi = object.fde_count;
  bool ok = true;
  while (hi - lo > kSearchWindow && ok) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (table_word(object.table, mid, 0, memory, ok) <= target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  int32_t window[2 * kSearchWindow];
  const uint64_t count = hi - lo;
  if (!ok || !memory(window, object.table + lo * 8, count * 8)) return 0;
  uint64_t found = count;
  for (uint64_t i = 0; i < count && window[2 * i] <= target; ++i) found = i;
  if (found == count) return 0;  // pc below every FDE
  return hdr + static_cast<uint64_t>(int64_t{window[2 * found + 1]});
}

}  // namespace dprobe::core
