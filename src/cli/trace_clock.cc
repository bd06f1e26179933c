// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/trace_clock.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "arch/runtime/cycle_counter.h"

namespace dprobe::cli {
namespace {

uint64_t monotonic_now() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// The first page of a dummy software event on this process, or null. It
// counts nothing; it is opened only for what its page says about time.
const volatile perf_event_mmap_page* open_time_page() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return nullptr;
  void* page = ::mmap(nullptr, static_cast<size_t>(::sysconf(_SC_PAGESIZE)), PROT_READ, MAP_SHARED,
                      static_cast<int>(fd), 0);
  ::close(static_cast<int>(fd));  // the mapping keeps the event
  if (page == MAP_FAILED) return nullptr;
  const auto* time_page = static_cast<const volatile perf_event_mmap_page*>(page);
  if (time_page->cap_user_time == 0 || time_page->cap_user_time_zero == 0) {
    ::munmap(page, static_cast<size_t>(::sysconf(_SC_PAGESIZE)));
    return nullptr;
  }
  return time_page;
}

}  // namespace

const TraceClock& TraceClock::get() {
  static const TraceClock clock;
  return clock;
}

TraceClock::TraceClock() : page_(open_time_page()) {
  if (page_ == nullptr) return;
  // The offset at the moment the two clocks are read closest together.
  uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    const uint64_t before = monotonic_now();
    const uint64_t cycles = trace::cycles_to_ns(arch::read_cycle_counter(), conversion());
    const uint64_t after = monotonic_now();
    if (after - before < best_gap) {
      best_gap = after - before;
      monotonic_offset_ = static_cast<int64_t>(cycles - (before + (after - before) / 2));
    }
  }
}

// Read under the page's sequence lock: the kernel may be rewriting it.
trace::CycleConversion TraceClock::conversion() const {
  trace::CycleConversion c;
  uint32_t sequence;
  do {
    sequence = page_->lock;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    c.zero = page_->time_zero;
    c.mult = page_->time_mult;
    c.shift = page_->time_shift;
    c.short_counter = page_->cap_user_time_short != 0;
    c.cycles = page_->time_cycles;
    c.mask = page_->time_mask;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } while (page_->lock != sequence);
  return c;
}

trace::TimestampScale TraceClock::scale(trace::ClockKind kind) const {
  trace::TimestampScale scale;
  scale.kind = kind;
  if (kind == trace::ClockKind::kCycles && page_ != nullptr) scale.conversion = conversion();
  scale.monotonic_offset = monotonic_offset_;
  return scale;
}

uint64_t TraceClock::now_ns() const {
  if (page_ == nullptr) return monotonic_now();
  return trace::cycles_to_ns(arch::read_cycle_counter(), conversion());
}

}  // namespace dprobe::cli
