// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/trace_clock.h"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <thread>

#include "arch/runtime/cycle_counter.h"

namespace dprobe::cli {
namespace {

uint64_t monotonic() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

TEST(TraceClockCli, CountedCyclesLandOnClockMonotonic) {
  TraceClock& clock = TraceClock::get();
  if (!clock.has_cycles()) GTEST_SKIP() << "the kernel does not keep time with the CPU's counter";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t cycles = arch::read_cycle_counter();
  const uint64_t ns = monotonic();
  const trace::TimestampScale scale = clock.scale(trace::ClockKind::kCycles);
  EXPECT_NEAR(static_cast<double>(scale.to_ns(cycles)), static_cast<double>(ns), 20'000.0);
}

TEST(TraceClockCli, CyclesKeepTheRateOfClockMonotonic) {
  TraceClock& clock = TraceClock::get();
  if (!clock.has_cycles()) GTEST_SKIP() << "the kernel does not keep time with the CPU's counter";
  const uint64_t start_cycles = arch::read_cycle_counter();
  const uint64_t start_ns = monotonic();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const uint64_t end_cycles = arch::read_cycle_counter();
  const uint64_t end_ns = monotonic();
  const trace::TimestampScale scale = clock.scale(trace::ClockKind::kCycles);
  const double converted = static_cast<double>(scale.to_ns(end_cycles) - scale.to_ns(start_cycles));
  EXPECT_NEAR(converted, static_cast<double>(end_ns - start_ns), 0.002 * 50e6 + 20'000.0);
}

TEST(TraceClockCli, MonotonicStampsPassUnchanged) {
  const trace::TimestampScale scale = TraceClock::get().scale(trace::ClockKind::kMonotonic);
  EXPECT_EQ(scale.to_ns(123456789), 123456789u);
}

}  // namespace
}  // namespace dprobe::cli
