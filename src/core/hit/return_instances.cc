// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/return_instances.h"

#include "base/hit_path.h"

namespace dprobe::core {
namespace {

DPROBE_HIT_PATH uint64_t pack(uint32_t index, uint32_t tag) {
  return (uint64_t{tag} << 32) | index;
}
DPROBE_HIT_PATH uint32_t index_of(uint64_t head) { return static_cast<uint32_t>(head); }
DPROBE_HIT_PATH uint32_t tag_of(uint64_t head) { return static_cast<uint32_t>(head >> 32); }

}  // namespace

ReturnInstancePool::ReturnInstancePool(uint32_t count)
    : count_(count),
      instances_(new ReturnInstance[count]()),
      free_head_(pack(count ? 0 : kEnd, 0)) {
  for (uint32_t i = 0; i < count; ++i) instances_[i].next_free = i + 1 < count ? i + 1 : kEnd;
}

DPROBE_HIT_PATH void ReturnInstancePool::raise_used_bound(uint32_t bound) noexcept {
  uint32_t seen = used_bound_.load(std::memory_order_relaxed);
  while (seen < bound && !used_bound_.compare_exchange_weak(seen, bound, std::memory_order_release,
                                                            std::memory_order_relaxed)) {
  }
}

DPROBE_HIT_PATH std::optional<uint32_t> ReturnInstancePool::acquire() noexcept {
  uint64_t head = free_head_.load(std::memory_order_acquire);
  while (index_of(head) != kEnd) {
    const uint32_t index = index_of(head);
    const uint32_t next = instances_[index].next_free;
    // The tag changes on every pop, so a head that was popped and pushed
    // back in between cannot be mistaken for this one.
    if (free_head_.compare_exchange_weak(head, pack(next, tag_of(head) + 1),
                                         std::memory_order_acq_rel, std::memory_order_acquire)) {
      raise_used_bound(index + 1);
      return index;
    }
  }
  return std::nullopt;
}

DPROBE_HIT_PATH void ReturnInstancePool::release(uint32_t index) noexcept {
  uint64_t head = free_head_.load(std::memory_order_relaxed);
  do {
    instances_[index].next_free = index_of(head);
  } while (!free_head_.compare_exchange_weak(head, pack(index, tag_of(head)),
                                             std::memory_order_release, std::memory_order_relaxed));
}

}  // namespace dprobe::core
