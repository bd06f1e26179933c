// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/epoch.h"

#include <linux/membarrier.h>

#include <iterator>
#include <thread>

#include "arch/runtime/raw_syscall.h"

namespace dprobe::core {
namespace {

// Every domain and every fork of one gets a serial no thread has cached.
std::atomic<uint64_t> g_next_serial{1};

uint64_t parity_count(uint64_t counts, uint32_t parity) {
  return (counts >> (32 * parity)) & 0xffffffffu;
}

}  // namespace

EpochDomain::EpochDomain() : serial_(g_next_serial.fetch_add(1)) {}

bool EpochDomain::use_process_barrier() noexcept {
  const bool registered = !arch::raw_failed(
      arch::raw_syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0));
  readers_fence_.store(!registered);
  return registered;
}

void EpochDomain::forked() noexcept {
  for (ReaderSlot& slot : slots_) {
    slot.owner.store(0, std::memory_order_relaxed);
    slot.counts.store(0, std::memory_order_relaxed);
  }
  shared_.counts.store(0, std::memory_order_relaxed);
  serial_.store(g_next_serial.fetch_add(1));
  // The registration belonged to the parent's address space.
  readers_fence_.store(true);
}

void EpochDomain::reap(bool (*alive)(uint32_t tid)) noexcept {
  for (ReaderSlot& slot : slots_) {
    uint32_t owner = slot.owner.load(std::memory_order_relaxed);
    // A thread that is gone left every reader it entered.
    if (owner != 0 && slot.counts.load() == 0 && !alive(owner)) {
      slot.owner.compare_exchange_strong(owner, 0);
    }
  }
}

uint32_t EpochDomain::owned_slots() const noexcept {
  uint32_t owned = 0;
  for (const ReaderSlot& slot : slots_) owned += slot.owner.load() != 0 ? 1u : 0u;
  return owned;
}

// Makes every reader's count visible to the loads that follow, and the
// writer's unpublishing visible to every reader that enters after it.
// False when that could not be done: the pass must flip nothing.
bool EpochDomain::writer_barrier() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (readers_fence_.load()) return true;  // the readers fence themselves
  if (!arch::raw_failed(arch::raw_syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0))) {
    return true;
  }
  // Cannot happen once registered. Readers fence from now on; the ones
  // inside already are not known to be visible yet.
  readers_fence_.store(true);
  return false;
}

uint64_t EpochDomain::readers_of(uint32_t parity) const noexcept {
  uint64_t readers = parity_count(shared_.counts.load(), parity);
  for (const ReaderSlot& slot : slots_) {
    readers += parity_count(slot.counts.load(std::memory_order_relaxed), parity);
  }
  return readers;
}

// Readers of the other parity entered before the last flip; while one is
// left, nothing retired before that flip may go. `always`: flip even with
// nothing to free (to wait for readers), else there is no barrier to pay.
// What may go now is moved to `freed`, for the caller to free outside the
// lock.
size_t EpochDomain::flip_if_quiet(uint32_t epoch, bool always, RetiredList& freed) {
  std::lock_guard lock(mutex_);
  if (!always && current_.empty() && previous_.empty()) return 0;
  if (epoch_.load() != epoch) return current_.size() + previous_.size();
  if (!writer_barrier() || readers_of((epoch & 1) ^ 1) != 0)
    return current_.size() + previous_.size();
  std::move(previous_.begin(), previous_.end(), std::back_inserter(freed));
  previous_ = std::move(current_);
  current_.clear();
  epoch_.store(epoch + 1);
  return previous_.size();
}

size_t EpochDomain::reclaim() {
  RetiredList freed;  // freed on return, outside the lock
  return flip_if_quiet(epoch_.load(), false, freed);
}

// What the flips free is freed once the wait is over: freeing runs the C
// library's free, which may itself be probed (every function of libc,
// still breakpoints while they are being armed), and thousands of trapped
// calls on a loaded machine took longer than the whole wait.
bool EpochDomain::synchronize(std::chrono::milliseconds timeout) {
  const uint32_t start = epoch_.load();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  RetiredList freed;
  while (epoch_.load() - start < 2) {
    flip_if_quiet(epoch_.load(), true, freed);
    if (epoch_.load() - start >= 2) break;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

}  // namespace dprobe::core
