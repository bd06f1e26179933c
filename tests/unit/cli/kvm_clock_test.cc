// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/clock/kvm_clock.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <fstream>
#include <string>

namespace dprobe::cli {
namespace {

// A pvclock_vcpu_time_info record as a host writes it: version, pad,
// tsc_timestamp, system_time, tsc_to_system_mul, tsc_shift, flags, pad.
std::array<std::byte, 32> record(uint32_t version, uint32_t mul, int8_t shift, uint8_t flags) {
  std::array<std::byte, 32> bytes{};
  std::memcpy(bytes.data(), &version, 4);
  const uint64_t tsc_timestamp = 1'501'538'143'043'085u;
  const uint64_t system_time = 1'335'830'415u;
  std::memcpy(bytes.data() + 8, &tsc_timestamp, 8);
  std::memcpy(bytes.data() + 16, &system_time, 8);
  std::memcpy(bytes.data() + 24, &mul, 4);
  std::memcpy(bytes.data() + 28, &shift, 1);
  std::memcpy(bytes.data() + 29, &flags, 1);
  return bytes;
}

// Read off a KVM guest with a 2096.028 MHz TSC.
constexpr uint32_t kMul = 4098196489u;

TEST(KvmClock, AStableRecordGivesTheSlopeTheVdsoUses) {
  const auto slope = pvclock_slope(record(50, kMul, -1, 1));
  ASSERT_TRUE(slope);
  EXPECT_EQ(slope->mult, kMul);
  EXPECT_EQ(slope->shift, 33);  // halve, then * mul >> 32
  EXPECT_NEAR(static_cast<double>(trace::cycles_to_ns(2'096'028'000u, *slope)), 1e9, 1000.0);
}

TEST(KvmClock, APositiveShiftDoublesTheCountFirst) {
  const auto slope = pvclock_slope(record(2, kMul, 1, 1));
  ASSERT_TRUE(slope);
  EXPECT_EQ(slope->shift, 31);
}

TEST(KvmClock, NoSlopeWithoutTheHostsWordForTheTsc) {
  EXPECT_FALSE(pvclock_slope(record(50, kMul, -1, 0)));  // not stable across CPUs
  EXPECT_FALSE(pvclock_slope(record(51, kMul, -1, 1)));  // an update under way
  EXPECT_FALSE(pvclock_slope(record(50, 0, -1, 1)));     // no rate
  EXPECT_FALSE(pvclock_slope(record(50, kMul, -8, 1)));  // 0.0037 ns a cycle: 268 GHz
  const auto whole = record(50, kMul, -1, 1);
  EXPECT_FALSE(pvclock_slope(std::span(whole).first(16)));  // cut short
}

std::string clocksource() {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  in >> name;
  return name;
}

// On a KVM guest whose vDSO reads the TSC, the page is there and says so;
// elsewhere there is nothing to read (and reading it must not kill us).
TEST(KvmClock, ThisMachinesClockIsReadWithoutHarm) {
  const auto slope = kvm_clock_slope();
  if (clocksource() != "kvm-clock") {
    EXPECT_FALSE(slope);
    return;
  }
  if (!slope) GTEST_SKIP() << "kvm-clock without a TSC its host vouches for";
  EXPECT_GE(slope->shift, 1);
  EXPECT_NE(slope->mult, 0u);
}

}  // namespace
}  // namespace dprobe::cli
