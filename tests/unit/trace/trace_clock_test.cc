// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/trace_clock.h"

#include <gtest/gtest.h>

namespace dprobe::trace {
namespace {

__extension__ using Wide = unsigned __int128;

// The exact value, spelled out with 128-bit arithmetic.
uint64_t reference_ns(uint64_t cycles, const CycleConversion& c) {
  return c.zero + static_cast<uint64_t>((static_cast<Wide>(cycles) * c.mult) >> c.shift);
}

// A 2.5 GHz counter: 0.4 ns per cycle, as the kernel scales it.
CycleConversion at_2_5_ghz() {
  CycleConversion c;
  c.shift = 31;
  c.mult = static_cast<uint32_t>((uint64_t{1} << 31) * 2 / 5);
  c.zero = 1'000'000;
  return c;
}

TEST(TraceClock, CyclesBecomeNanosecondsWithTheKernelsMultiplierAndShift) {
  const CycleConversion c = at_2_5_ghz();
  EXPECT_EQ(cycles_to_ns(0, c), 1'000'000u);
  EXPECT_EQ(cycles_to_ns(2'500'000'000u, c), reference_ns(2'500'000'000u, c));
  EXPECT_NEAR(static_cast<double>(cycles_to_ns(2'500'000'000u, c) - c.zero), 1e9, 1.0);
}

TEST(TraceClock, LargeCountsDoNotOverflow) {
  const CycleConversion c = at_2_5_ghz();
  // Months of uptime: cycles * mult alone would overflow 64 bits.
  for (uint64_t cycles : {uint64_t{1} << 50, uint64_t{1} << 56, (uint64_t{1} << 62) + 12345}) {
    EXPECT_EQ(cycles_to_ns(cycles, c), reference_ns(cycles, c)) << cycles;
  }
}

// kvm-clock's slope for a 2.096 GHz TSC (its record halves the count,
// then multiplies by 0.954 and shifts by 32): shift 33, where the part of
// the count below 2^shift times mult no longer fits 64 bits.
TEST(TraceClock, AShiftPast32DoesNotOverflow) {
  CycleConversion c;
  c.mult = 4098196489u;
  c.shift = 33;
  const uint64_t one_second = 2'096'028'000u;
  EXPECT_NEAR(static_cast<double>(cycles_to_ns(one_second, c)), 1e9, 1000.0);
  for (uint64_t cycles : {(uint64_t{1} << 33) - 1, uint64_t{1} << 52, 12'545'000'000'000'000u}) {
    EXPECT_EQ(cycles_to_ns(cycles, c), reference_ns(cycles, c)) << cycles;
  }
}

TEST(TraceClock, AShortCounterIsExtendedFromTheKernelsLastReading) {
  CycleConversion c = at_2_5_ghz();
  c.short_counter = true;
  c.mask = (uint64_t{1} << 56) - 1;
  c.cycles = (uint64_t{1} << 56) + 1000;  // the kernel's extended value, past one wrap
  // The hardware shows the low 56 bits only; the conversion adds the wraps back.
  const uint64_t full = c.cycles + 5000;
  EXPECT_EQ(cycles_to_ns(full & c.mask, c), reference_ns(full, c));
}

TEST(TraceClock, MonotonicStampsAreNanosecondsAlready) {
  TimestampScale scale;
  EXPECT_EQ(scale.to_ns(1000), 1000u);
  scale.kind = ClockKind::kCycles;
  scale.conversion = at_2_5_ghz();
  EXPECT_EQ(scale.to_ns(2'500'000'000u), reference_ns(2'500'000'000u, scale.conversion));
}

}  // namespace
}  // namespace dprobe::trace
