// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The stack unwinder's cache of frame rules by pc (core/stack_unwind.h):
// lock-free, fixed-size, for the hit path.
//
//   static UnwindCache cache;
//   unwind_stack(regs, objects, pcs, max, fixup, memory, &cache);
#ifndef DPROBE_CORE_UNWIND_CACHE_H_
#define DPROBE_CORE_UNWIND_CACHE_H_

#include <atomic>
#include <cstdint>

#include "core/hit/cfa_program.h"

namespace dprobe::core {

// Frame rules already worked out, by pc: a hot probe's stack reads the
// tables once. Shared by every thread without locks: each entry is a small
// seqlock, which a writer takes with a compare-exchange (or leaves alone
// when another writer has it) and readers check; nothing is written on a
// hit that finds its rules. An entry belongs to one generation of the
// objects table: any change of the table makes them all stale.
class UnwindCache {
 public:
  static constexpr uint32_t kEntries = 1024;  // a power of two
  // One frame's rules (stack_unwind.cc's FrameRules: a row and two words),
  // as many as the host ISA's DWARF columns make.
  static constexpr uint32_t kWords = sizeof(unwinding::Row) / 8 + 2;

  UnwindCache() = default;
  UnwindCache(const UnwindCache&) = delete;
  UnwindCache& operator=(const UnwindCache&) = delete;

  // The unwinder's: the rules kept for `pc` under `generation`, or false.
  bool recall(uint64_t pc, uint64_t generation, uint64_t (&words)[kWords]) const noexcept;
  void remember(uint64_t pc, uint64_t generation, const uint64_t (&words)[kWords]) noexcept;

 private:
  struct Entry {
    std::atomic<uint64_t> sequence{0};  // odd while written
    std::atomic<uint64_t> pc{0};
    std::atomic<uint64_t> tag{0};  // the generation + 1: 0 is no entry
    std::atomic<uint64_t> words[kWords] = {};
  };
  Entry entries_[kEntries];
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_UNWIND_CACHE_H_
