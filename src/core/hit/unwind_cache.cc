// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/unwind_cache.h"

#include <bit>

#include "base/hit_path.h"

namespace dprobe::core {
namespace {

DPROBE_HIT_PATH uint32_t entry_of(uint64_t pc) {
  // Fibonacci hashing: the high bits of a multiple mix every bit of pc.
  constexpr uint32_t kBits = std::bit_width(UnwindCache::kEntries - 1);
  return static_cast<uint32_t>((pc * 0x9e3779b97f4a7c15ull) >> (64 - kBits));
}

}  // namespace

DPROBE_HIT_PATH bool UnwindCache::recall(uint64_t pc, uint64_t generation,
                                         uint64_t (&words)[kWords]) const noexcept {
  const Entry& entry = entries_[entry_of(pc)];
  const uint64_t before = entry.sequence.load(std::memory_order_acquire);
  if ((before & 1) != 0 || entry.pc.load(std::memory_order_relaxed) != pc ||
      entry.tag.load(std::memory_order_relaxed) != generation + 1) {
    return false;
  }
  for (uint32_t i = 0; i < kWords; ++i) words[i] = entry.words[i].load(std::memory_order_relaxed);
  // The words were read before the sequence is read again.
  std::atomic_thread_fence(std::memory_order_acquire);
  return entry.sequence.load(std::memory_order_relaxed) == before;
}

DPROBE_HIT_PATH void UnwindCache::remember(uint64_t pc, uint64_t generation,
                                           const uint64_t (&words)[kWords]) noexcept {
  Entry& entry = entries_[entry_of(pc)];
  uint64_t sequence = entry.sequence.load(std::memory_order_relaxed);
  // Taken by another writer: that one's rules will do.
  if ((sequence & 1) != 0 ||
      !entry.sequence.compare_exchange_strong(sequence, sequence + 1, std::memory_order_acquire)) {
    return;
  }
  std::atomic_thread_fence(std::memory_order_release);
  entry.pc.store(pc, std::memory_order_relaxed);
  entry.tag.store(generation + 1, std::memory_order_relaxed);
  for (uint32_t i = 0; i < kWords; ++i) entry.words[i].store(words[i], std::memory_order_relaxed);
  entry.sequence.store(sequence + 2, std::memory_order_release);
}

}  // namespace dprobe::core
