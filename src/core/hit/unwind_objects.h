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
// An object's .eh_frame_hdr search table is read by core/eh_frame_hdr.h, its
// .eh_frame entries (CIE, FDE) by core/eh_frame_entries.h.
#ifndef DPROBE_CORE_UNWIND_OBJECTS_H_
#define DPROBE_CORE_UNWIND_OBJECTS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "core/hit/eh_frame_hdr.h"
#include "core/hit/unwind_memory.h"

namespace dprobe::core {

// The objects the dynamic loader has mapped now, the vDSO included, each
// with a usable .eh_frame_hdr (PT_GNU_EH_FRAME), at most
// UnwindObjects::kCapacity. Uses dl_iterate_phdr, which takes the loader's
// lock: never on a hit.
std::vector<UnwindObject> loaded_unwind_objects();

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

}  // namespace dprobe::core

#endif  // DPROBE_CORE_UNWIND_OBJECTS_H_
