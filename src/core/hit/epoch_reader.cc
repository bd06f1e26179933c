// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The reader's side of an epoch domain that a hit may run: taking a reader
// slot on a thread's first read (core/epoch.h).
#include "arch/runtime/raw_syscall.h"
#include "base/hit_path.h"
#include "core/epoch.h"

namespace dprobe::core {
namespace {

// Raw: a probe on libc's gettid() must not be hit from inside a hit.
DPROBE_HIT_PATH uint32_t kernel_thread_id() noexcept {
  return static_cast<uint32_t>(arch::raw_syscall(SYS_gettid));
}
std::atomic<EpochDomain::ThreadIdSource> g_thread_ids{kernel_thread_id};

}  // namespace

void EpochDomain::set_thread_id_source(ThreadIdSource source) noexcept {
  g_thread_ids.store(source, std::memory_order_release);
}

DPROBE_HIT_PATH ReaderSlot* EpochDomain::claim_slot() noexcept {
  const uint32_t tid = g_thread_ids.load(std::memory_order_acquire)();
  ReaderSlot* slot = &shared_;
  for (ReaderSlot& candidate : slots_) {
    uint32_t free = 0;
    if (candidate.owner.load(std::memory_order_relaxed) == 0 &&
        candidate.owner.compare_exchange_strong(free, tid)) {
      slot = &candidate;
      break;
    }
  }
  t_epoch_cache = {serial_.load(std::memory_order_relaxed), slot};
  return slot;
}

}  // namespace dprobe::core
