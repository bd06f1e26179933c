// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The loaded objects a stack unwinder searches on a probe hit: for each,
// the run-time range of its code and the binary-search table of its
// .eh_frame_hdr (PT_GNU_EH_FRAME). One writer at a time (the agent's loader
// watch, under the table's own lock) and readers that never lock: a hit may
// interrupt any code, the writer's included.
//
//   static UnwindObjects objects;            // a fixed array, never freed
//   if (auto object = describe_object(text_begin, text_end, hdr, safe_unwind_memory()))
//     objects.add(*object);
//   ... on a hit:
//   UnwindObject found;
//   if (objects.find(pc, found)) fde = find_fde(found, pc, memory);
//
// Readers go by a sequence count (a seqlock): one that saw the writer in the
// middle of a change tries again a few times, then answers "not found" (the
// stack ends there) rather than wait for it.
//
// Below the table: reading an object's .eh_frame_hdr search table and its
// .eh_frame entries (CIE, FDE) in place, through fault-safe reads.
#ifndef DPROBE_CORE_UNWIND_OBJECTS_H_
#define DPROBE_CORE_UNWIND_OBJECTS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace dprobe::core {

// How the unwinder reads the program's memory, tables and stacks alike, so
// that the agent hands over the reader of the probe (fault-safe copies, or
// process_vm_readv where a fault would kill the process): trace::
// MemoryReader's shape, noexcept. True when all `size` bytes were copied.
struct UnwindMemory {
  bool (*read)(void* context, void* dst, uint64_t src, size_t size) noexcept;
  void* context;

  bool operator()(void* dst, uint64_t src, size_t size) const noexcept {
    return read(context, dst, src, size);
  }
};

// arch::safe_read: a fault is a failed read (the caller's SIGSEGV handler
// calls arch::fixup_memory_fault).
UnwindMemory safe_unwind_memory() noexcept;

// One object as the unwinder needs it.
struct UnwindObject {
  uint64_t text_begin = 0;  // [text_begin, text_end): its executable segments
  uint64_t text_end = 0;
  uint64_t eh_frame_hdr = 0;  // where .eh_frame_hdr is mapped
  uint64_t table = 0;         // its search table: (initial location, FDE) pairs
  uint64_t fde_count = 0;

  bool operator==(const UnwindObject&) const = default;
};

// The object whose .eh_frame_hdr is mapped at `eh_frame_hdr`, if that header
// has the sorted search table every linker writes (version 1, entries of
// two datarel sdata4 words); nullopt otherwise: an object the unwinder stops
// at.
std::optional<UnwindObject> describe_object(uint64_t text_begin, uint64_t text_end,
                                            uint64_t eh_frame_hdr, UnwindMemory memory) noexcept;

// The objects the dynamic loader has mapped now, the vDSO included, each
// with a usable .eh_frame_hdr (PT_GNU_EH_FRAME), at most
// UnwindObjects::kCapacity. Uses dl_iterate_phdr, which takes the loader's
// lock: never on a hit.
std::vector<UnwindObject> loaded_unwind_objects();

// The FDE that may cover `pc` (the one with the greatest initial location
// not above it), by binary search of the object's table; 0 when `pc` is
// below every FDE or the table cannot be read. The caller checks the FDE's
// range: functions without unwind information leave gaps.
uint64_t find_fde(const UnwindObject& object, uint64_t pc, UnwindMemory memory) noexcept;

class UnwindObjects {
 public:
  // Enough for any program seen so far; add() refuses the ones past it.
  static constexpr uint32_t kCapacity = 1024;

  UnwindObjects() = default;
  UnwindObjects(const UnwindObjects&) = delete;
  UnwindObjects& operator=(const UnwindObjects&) = delete;

  // Writers, serialized by the table's own lock. add() is false when the
  // table is full, the range is empty, or it overlaps one already there;
  // remove() when no object begins at `text_begin`.
  bool add(const UnwindObject& object);
  bool remove(uint64_t text_begin);
  // Makes the table hold exactly `objects` (those that fit), keeping the
  // entries that stay: what the loader's list says after a change.
  void assign(std::span<const UnwindObject> objects);
  uint32_t size() const noexcept { return count_.load(std::memory_order_relaxed); }
  // Moves at every change, odd while one is under way: what the rules an
  // unwinder keeps (UnwindCache) were computed under.
  uint64_t generation() const noexcept { return sequence_.load(std::memory_order_acquire); }

  // For readers: the object whose code holds `pc`. Lock-free, no
  // allocation, bounded work; false when none does, or the writer kept
  // changing the table meanwhile.
  bool find(uint64_t pc, UnwindObject& out) const noexcept;

 private:
  struct Entry {
    std::atomic<uint64_t> text_begin{0};
    std::atomic<uint64_t> text_end{0};
    std::atomic<uint64_t> eh_frame_hdr{0};
    std::atomic<uint64_t> table{0};
    std::atomic<uint64_t> fde_count{0};
  };

  // How often a reader tries before it gives up.
  static constexpr int kReadAttempts = 8;

  UnwindObject load(uint32_t index) const noexcept;
  void store(uint32_t index, const UnwindObject& object) noexcept;
  bool search(uint64_t pc, uint32_t count, UnwindObject& out) const noexcept;
  // Under the lock; each change is one write (the sequence odd meanwhile).
  bool insert_locked(const UnwindObject& object) noexcept;
  bool erase_locked(uint64_t text_begin) noexcept;
  void begin_write() noexcept;
  void end_write() noexcept;

  std::mutex writer_;
  // Odd while the writer changes entries; readers retry when it moved.
  std::atomic<uint64_t> sequence_{0};
  std::atomic<uint32_t> count_{0};
  // Sorted by text_begin, ranges disjoint.
  Entry entries_[kCapacity];
};

// ---- Reading an object's .eh_frame entries (CIE and FDE), for the unwinder.
namespace unwinding {

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
  uint64_t uleb() noexcept {
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

}  // namespace unwinding
}  // namespace dprobe::core

#endif  // DPROBE_CORE_UNWIND_OBJECTS_H_
