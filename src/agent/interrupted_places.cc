// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/interrupted_places.h"

#include <atomic>

#include "arch/runtime/raw_syscall.h"

namespace dprobe::agent {
namespace {

// Handlers running at once, over all threads: more than any program nests.
constexpr uint32_t kPlaces = 256;
constexpr uint32_t kUnnoted = kPlaces;

struct Place {
  std::atomic<uint32_t> tid{0};  // 0: free
  std::atomic<uint64_t> pc{0};
};

Place g_places[kPlaces];
std::atomic<uint32_t> g_unnoted{0};  // handlers running whose place is not in the table

}  // namespace

uint32_t note_interrupted(uint64_t pc) noexcept {
  const uint32_t tid = arch::raw_gettid();
  for (uint32_t i = 0; i < kPlaces; ++i) {
    uint32_t free = 0;
    if (g_places[i].tid.load(std::memory_order_relaxed) == 0 &&
        g_places[i].tid.compare_exchange_strong(free, tid, std::memory_order_acq_rel)) {
      g_places[i].pc.store(pc, std::memory_order_release);
      return i;
    }
  }
  g_unnoted.fetch_add(1);
  return kUnnoted;
}

void forget_interrupted(uint32_t place) noexcept {
  if (place == kUnnoted) {
    g_unnoted.fetch_sub(1);
    return;
  }
  g_places[place].pc.store(0, std::memory_order_relaxed);
  g_places[place].tid.store(0, std::memory_order_release);
}

bool interrupted_inside(uint64_t begin, uint64_t end) noexcept {
  if (g_unnoted.load() != 0) return true;
  const uint32_t pid = arch::own_pid();
  for (Place& place : g_places) {
    const uint32_t tid = place.tid.load(std::memory_order_acquire);
    if (tid == 0) continue;
    const uint64_t pc = place.pc.load(std::memory_order_acquire);
    if (pc == 0) return true;  // claimed, its place not stored yet: unknown
    if (pc <= begin || pc >= end) continue;
    // A thread that left its handler by longjmp and then ended (or one of
    // the parent, in a forked child) returns nowhere.
    if (arch::raw_thread_alive(pid, tid)) return true;
    uint32_t seen = tid;
    place.tid.compare_exchange_strong(seen, 0);
  }
  return false;
}

}  // namespace dprobe::agent
