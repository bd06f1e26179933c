// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/clock/trace_clock.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "arch/host.h"
#include "arch/runtime/cycle_counter.h"
#include "cli/clock/kvm_clock.h"

namespace dprobe::cli {
namespace {

__extension__ using Wide = unsigned __int128;  // GCC and Clang both have it

constexpr uint16_t kShift = 31;                 // ns per cycle below 2: counters from 0.5 GHz
constexpr uint64_t kMinBaselineNs = 1'000'000;  // between anchors the slope is taken from

// The kernel's multiplier and shift for the counter, from the first page of
// a dummy software event on this process, where the kernel fills them in
// (cap_user_time: its sched_clock runs on the counter, not on a paravirtual
// clock as in many virtual machines).
std::optional<trace::CycleConversion> kernel_slope() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const auto page_size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* mapped = ::mmap(nullptr, page_size, PROT_READ, MAP_SHARED, static_cast<int>(fd), 0);
  ::close(static_cast<int>(fd));
  if (mapped == MAP_FAILED) return std::nullopt;
  const auto* page = static_cast<const volatile perf_event_mmap_page*>(mapped);
  std::optional<trace::CycleConversion> slope;
  uint32_t sequence;
  do {  // under the page's sequence lock: the kernel may be rewriting it
    sequence = page->lock;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (page->cap_user_time != 0 && page->time_mult != 0) {
      trace::CycleConversion c;
      c.mult = page->time_mult;
      c.shift = page->time_shift;
      slope = c;
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } while (page->lock != sequence);
  ::munmap(mapped, page_size);
  return slope;
}

}  // namespace

std::optional<std::string> TraceClock::cycle_clocksource() {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  if (!(in >> name)) return std::nullopt;
  if (!arch::kCycleClocksource.empty() && name == arch::kCycleClocksource) return name;
  if (!arch::kParavirtCycleClocksource.empty() && name == arch::kParavirtCycleClocksource &&
      kvm_clock_slope()) {
    return name;
  }
  return std::nullopt;
}

uint64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

TraceClock& TraceClock::get() {
  static TraceClock clock;
  return clock;
}

TraceClock::TraceClock() {
  const std::optional<std::string> source = cycle_clocksource();
  has_cycles_ = source.has_value();
  if (!has_cycles_) return;
  kernel_slope_ = *source == arch::kCycleClocksource ? kernel_slope() : kvm_clock_slope();
  first_ = last_ = read_anchor();
}

// The counter and CLOCK_MONOTONIC read as close together as five tries get.
TraceClock::Anchor TraceClock::read_anchor() {
  Anchor best;
  uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    const uint64_t before = monotonic_ns();
    const uint64_t cycles = arch::read_cycle_counter();
    const uint64_t after = monotonic_ns();
    if (after - before < best_gap) {
      best_gap = after - before;
      best = {cycles, before + (after - before) / 2};
    }
  }
  return best;
}

// ns = first.ns + (cycles - first.cycles) * slope, as zero + cycles * mult >> shift.
void TraceClock::update_conversion() {
  trace::CycleConversion c;
  if (kernel_slope_) {
    c = *kernel_slope_;
  } else {
    const auto span_ns = static_cast<Wide>(last_.ns - first_.ns);
    const uint64_t span_cycles = last_.cycles - first_.cycles;
    c.shift = kShift;
    c.mult = static_cast<uint32_t>((span_ns << kShift) / span_cycles);
  }
  c.zero = 0;
  c.zero = first_.ns - trace::cycles_to_ns(first_.cycles, c);
  conversion_ = c;
}

trace::TimestampScale TraceClock::scale(trace::ClockKind kind) {
  trace::TimestampScale scale;
  scale.kind = kind;
  if (kind != trace::ClockKind::kCycles || !has_cycles_) return scale;
  std::lock_guard lock(mutex_);
  Anchor now = read_anchor();
  if (!kernel_slope_ && now.ns - first_.ns < kMinBaselineNs) {
    // Too short a baseline for a slope yet: wait the rest of a millisecond,
    // once per run, at the first pass that has cycles to convert.
    std::this_thread::sleep_for(std::chrono::nanoseconds(kMinBaselineNs - (now.ns - first_.ns)));
    now = read_anchor();
  }
  last_ = now;
  update_conversion();
  scale.conversion = conversion_;
  return scale;
}

uint64_t TraceClock::now_ns() const { return monotonic_ns(); }

}  // namespace dprobe::cli
