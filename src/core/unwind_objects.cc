// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/unwind_objects.h"

#include <link.h>

#include <algorithm>
#include <vector>

#include "arch/runtime/safe_memory.h"

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

bool read_safely(void*, void* dst, uint64_t src, size_t size) noexcept {
  return arch::safe_read(dst, src, size);
}

// The size of a fixed-size DW_EH_PE format; 0 for LEB128 and unknown ones,
// which a header never needs.
uint64_t fixed_size(uint8_t encoding) {
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
bool read_count(uint64_t at, uint8_t encoding, UnwindMemory memory, uint64_t& count) {
  const uint64_t size = fixed_size(encoding);
  if (size == 0 || (encoding & kPeApplicationMask) != 0) return false;
  count = 0;
  return memory(&count, at, size);  // little-endian: the low bytes
}

int32_t table_word(uint64_t table, uint64_t index, uint32_t word, UnwindMemory memory, bool& ok) {
  int32_t value = 0;
  ok = ok && memory(&value, table + index * 8 + word * 4, sizeof value);
  return value;
}

int collect_object(dl_phdr_info* info, size_t, void* data) {
  auto& objects = *static_cast<std::vector<UnwindObject>*>(data);
  uint64_t begin = UINT64_MAX;
  uint64_t end = 0;
  uint64_t hdr = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uint64_t at = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_GNU_EH_FRAME) hdr = at;
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    begin = std::min(begin, at);
    end = std::max(end, at + ph.p_memsz);
  }
  if (begin >= end || objects.size() == UnwindObjects::kCapacity) return 0;
  if (auto object = describe_object(begin, end, hdr, safe_unwind_memory())) {
    objects.push_back(*object);
  }
  return 0;
}

}  // namespace

UnwindMemory safe_unwind_memory() noexcept { return {read_safely, nullptr}; }

std::vector<UnwindObject> loaded_unwind_objects() {
  std::vector<UnwindObject> objects;
  ::dl_iterate_phdr(collect_object, &objects);
  return objects;
}

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

uint64_t find_fde(const UnwindObject& object, uint64_t pc, UnwindMemory memory) noexcept {
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

UnwindObject UnwindObjects::load(uint32_t index) const noexcept {
  const Entry& e = entries_[index];
  constexpr auto kRelaxed = std::memory_order_relaxed;
  return {e.text_begin.load(kRelaxed), e.text_end.load(kRelaxed), e.eh_frame_hdr.load(kRelaxed),
          e.table.load(kRelaxed), e.fde_count.load(kRelaxed)};
}

void UnwindObjects::store(uint32_t index, const UnwindObject& object) noexcept {
  Entry& e = entries_[index];
  constexpr auto kRelaxed = std::memory_order_relaxed;
  e.text_begin.store(object.text_begin, kRelaxed);
  e.text_end.store(object.text_end, kRelaxed);
  e.eh_frame_hdr.store(object.eh_frame_hdr, kRelaxed);
  e.table.store(object.table, kRelaxed);
  e.fde_count.store(object.fde_count, kRelaxed);
}

void UnwindObjects::begin_write() noexcept {
  sequence_.store(sequence_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // The odd count is seen before any entry changes.
  std::atomic_thread_fence(std::memory_order_release);
}

void UnwindObjects::end_write() noexcept {
  sequence_.store(sequence_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

bool UnwindObjects::insert_locked(const UnwindObject& object) noexcept {
  const uint32_t count = size();
  if (count == kCapacity || object.text_begin >= object.text_end) return false;
  uint32_t at = 0;
  while (at < count && load(at).text_begin < object.text_begin) ++at;
  if (at > 0 && load(at - 1).text_end > object.text_begin) return false;
  if (at < count && load(at).text_begin < object.text_end) return false;
  begin_write();
  for (uint32_t i = count; i > at; --i) store(i, load(i - 1));
  store(at, object);
  count_.store(count + 1, std::memory_order_relaxed);
  end_write();
  return true;
}

bool UnwindObjects::erase_locked(uint64_t text_begin) noexcept {
  const uint32_t count = size();
  uint32_t at = 0;
  while (at < count && load(at).text_begin != text_begin) ++at;
  if (at == count) return false;
  begin_write();
  for (uint32_t i = at; i + 1 < count; ++i) store(i, load(i + 1));
  store(count - 1, UnwindObject{});
  count_.store(count - 1, std::memory_order_relaxed);
  end_write();
  return true;
}

bool UnwindObjects::add(const UnwindObject& object) {
  std::lock_guard lock(writer_);
  return insert_locked(object);
}

bool UnwindObjects::remove(uint64_t text_begin) {
  std::lock_guard lock(writer_);
  return erase_locked(text_begin);
}

void UnwindObjects::assign(std::span<const UnwindObject> objects) {
  std::vector<UnwindObject> wanted(objects.begin(), objects.end());
  auto before = [](const UnwindObject& a, const UnwindObject& b) {
    return a.text_begin < b.text_begin;
  };
  std::sort(wanted.begin(), wanted.end(), before);
  auto is_wanted = [&](const UnwindObject& object) {
    auto it = std::lower_bound(wanted.begin(), wanted.end(), object, before);
    return it != wanted.end() && *it == object;
  };
  std::lock_guard lock(writer_);
  // Each change is a write of its own: readers meanwhile see a table that
  // is whole, only not finished.
  for (uint32_t i = 0; i < size();) {
    const UnwindObject object = load(i);
    if (is_wanted(object)) {
      ++i;
    } else {
      erase_locked(object.text_begin);
    }
  }
  for (const UnwindObject& object : wanted) {
    UnwindObject present;
    if (!search(object.text_begin, size(), present) || !(present == object)) insert_locked(object);
  }
}

bool UnwindObjects::search(uint64_t pc, uint32_t count, UnwindObject& out) const noexcept {
  // The last entry that begins at or below pc.
  uint32_t lo = 0;
  uint32_t hi = std::min(count, kCapacity);
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (entries_[mid].text_begin.load(std::memory_order_relaxed) <= pc) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return false;
  out = load(lo - 1);
  return pc >= out.text_begin && pc < out.text_end;
}

bool UnwindObjects::find(uint64_t pc, UnwindObject& out) const noexcept {
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    const uint64_t before = sequence_.load(std::memory_order_acquire);
    if ((before & 1) != 0) {
#if defined(__x86_64__)
      for (int i = 0; i < 64; ++i) __builtin_ia32_pause();
#endif
      continue;
    }
    const bool found = search(pc, count_.load(std::memory_order_relaxed), out);
    // The entries were read before the sequence is read again.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sequence_.load(std::memory_order_relaxed) == before) return found;
  }
  return false;
}

namespace unwinding {
namespace {

constexpr uint8_t kPePcrel = 0x10;
constexpr uint8_t kPeAligned = 0x50;
constexpr uint8_t kPeIndirect = 0x80;
constexpr uint32_t kCieId = 0;  // in .eh_frame (.debug_frame's is all ones)
// Lengths from here up mean a 64-bit entry (0xffffffff) or are reserved.
constexpr uint64_t kLength64 = 0xfffffff0;
// The augmentation letters the unwinder knows, 'z' first: enough room.
constexpr int kMaxAugmentation = 8;

// An entry's first field; `end` gets where its content ends.
bool entry_bounds(Cursor& c, uint64_t& end) {
  const uint64_t length = c.fixed(4);
  if (!c.ok() || length == 0 || length >= kLength64) return false;
  end = c.at() + length;
  c.limit(end);
  return true;
}

bool read_augmentation_string(Cursor& c, char (&text)[kMaxAugmentation]) {
  for (int i = 0; i < kMaxAugmentation; ++i) {
    text[i] = static_cast<char>(c.u8());
    if (text[i] == 0) return c.ok();
  }
  return false;
}

// The augmentation data a 'z' CIE describes; stops at letters whose data
// it could not step over (the length covers them, but the letters after
// one could not be read).
bool read_augmentation_data(Cursor& c, const char* letters, Cie& cie) {
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

bool parse_cie(Tables& tables, uint64_t address, Cie& cie) {
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

bool ByteCache::fill(uint64_t address) noexcept {
  valid_ = 0;
  const uint64_t base = address & ~(kWindow - 1);
  if (!memory_(data_, base, kWindow)) return false;
  base_ = base;
  valid_ = kWindow;
  return true;
}

// A word the window does not hold, or not all of: byte by byte, through
// new windows.
bool ByteCache::word_across(uint64_t address, uint64_t& out) noexcept {
  uint8_t bytes[8];
  for (uint64_t i = 0; i < 8; ++i) {
    if (!byte(address + i, bytes[i])) return false;
  }
  __builtin_memcpy(&out, bytes, 8);
  return true;
}

// The bytes after a first one with its high bit set.
uint64_t Cursor::uleb_rest(uint8_t first) noexcept {
  uint64_t result = first & 0x7fu;
  for (uint64_t i = 1; i < kMaxLebBytes; ++i) {
    const uint8_t byte = u8();
    result |= uint64_t{byte & 0x7fu} << (7 * i);
    if ((byte & 0x80) == 0) return result;
  }
  ok_ = false;
  return 0;
}

int64_t Cursor::sleb_rest(uint8_t first) noexcept {
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

uint64_t Cursor::value(uint8_t encoding) noexcept {
  switch (encoding & kPeFormatMask) {
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

uint64_t Cursor::pointer(uint8_t encoding) noexcept {
  const uint64_t field = at_;
  const uint64_t stored = value(encoding);
  // textrel, datarel and funcrel have no base an FDE knows; an indirect
  // code address is not something compilers write.
  if ((encoding & kPeIndirect) != 0 || encoding == kPeOmit) ok_ = false;
  switch (encoding & kPeApplicationMask) {
    case 0:
      return stored;
    case kPePcrel:
      return field + stored;
    default:
      ok_ = false;
      return 0;
  }
}

void Cursor::skip_pointer(uint8_t encoding) noexcept {
  if (encoding == kPeOmit) return;
  if ((encoding & kPeApplicationMask) == kPeAligned) {
    seek((at_ + 7) & ~uint64_t{7});
    fixed(8);
    return;
  }
  value(encoding);
}

bool parse_fde(Tables& tables, uint64_t address, Cie& cie, Fde& fde) noexcept {
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

}  // namespace unwinding
}  // namespace dprobe::core
