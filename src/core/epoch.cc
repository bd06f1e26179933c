// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/epoch.h"

#include <thread>

namespace dprobe::core {

size_t EpochDomain::reclaim() {
  std::vector<std::unique_ptr<Retired>> freed;
  size_t waiting;
  {
    std::lock_guard lock(mutex_);
    const uint32_t epoch = epoch_.load();
    // Readers of the other parity entered before the last flip; while one
    // is left, nothing retired before that flip may go.
    if (counts_[(epoch & 1) ^ 1].load() != 0) return current_.size() + previous_.size();
    freed = std::move(previous_);
    previous_ = std::move(current_);
    current_.clear();
    epoch_.store(epoch + 1);
    waiting = previous_.size();
  }
  // `freed` goes out of scope here, outside the lock.
  return waiting;
}

bool EpochDomain::synchronize(std::chrono::milliseconds timeout) {
  const uint32_t start = epoch_.load();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (epoch_.load() - start < 2) {
    reclaim();
    if (epoch_.load() - start >= 2) break;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

}  // namespace dprobe::core
