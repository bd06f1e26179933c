// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/clock/trace_clock.h"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "arch/runtime/cycle_counter.h"

namespace dprobe::cli {
namespace {

uint64_t monotonic() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// A counter read and the CLOCK_MONOTONIC time it was taken at: the read
// bracketed by two clock reads, taken again while they lie far apart (a
// thread preempted between them, as a guest's vCPU often is under
// emulation, would otherwise measure the preemption, not the clock).
struct CounterReading {
  uint64_t cycles = 0;
  uint64_t ns = 0;
};
CounterReading read_counter_at_a_known_time() {
  CounterReading best;
  uint64_t best_gap = UINT64_MAX;
  for (int attempt = 0; attempt < 1000 && best_gap > 2'000; ++attempt) {
    const uint64_t before = monotonic();
    const uint64_t cycles = arch::read_cycle_counter();
    const uint64_t after = monotonic();
    if (after - before < best_gap) {
      best_gap = after - before;
      best = {cycles, before + best_gap / 2};
    }
  }
  return best;
}

TEST(TraceClockCli, CountedCyclesLandOnClockMonotonic) {
  TraceClock& clock = TraceClock::get();
  if (!clock.has_cycles()) GTEST_SKIP() << "the kernel does not keep time with the CPU's counter";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const CounterReading now = read_counter_at_a_known_time();
  const trace::TimestampScale scale = clock.scale(trace::ClockKind::kCycles);
  EXPECT_NEAR(static_cast<double>(scale.to_ns(now.cycles)), static_cast<double>(now.ns), 20'000.0);
}

TEST(TraceClockCli, CyclesKeepTheRateOfClockMonotonic) {
  TraceClock& clock = TraceClock::get();
  if (!clock.has_cycles()) GTEST_SKIP() << "the kernel does not keep time with the CPU's counter";
  const CounterReading start = read_counter_at_a_known_time();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const CounterReading end = read_counter_at_a_known_time();
  const trace::TimestampScale scale = clock.scale(trace::ClockKind::kCycles);
  const double converted = static_cast<double>(scale.to_ns(end.cycles) - scale.to_ns(start.cycles));
  EXPECT_NEAR(converted, static_cast<double>(end.ns - start.ns), 0.002 * 50e6 + 20'000.0);
}

TEST(TraceClockCli, MonotonicStampsPassUnchanged) {
  const trace::TimestampScale scale = TraceClock::get().scale(trace::ClockKind::kMonotonic);
  EXPECT_EQ(scale.to_ns(123456789), 123456789u);
}

}  // namespace
}  // namespace dprobe::cli
