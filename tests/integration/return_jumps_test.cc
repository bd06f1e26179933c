// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// longjmp and siglongjmp out of return-probed frames
// (tests/programs/ret_jumps.c), at -O0 and -O2. Each of the 20 rounds
// leaves 4 jumper frames (jumper(3) .. jumper(0)) without returning: their
// instances are stale, must be dropped and counted as misses (4 x 20 =
// 80, more than the default MAXACTIVE of 64, so stale instances that
// stayed would also shut out later calls), and the later calls, of jumper
// and of other functions, must still be traced, with the right values.
//
// The frames are left with a small stack under them, and with 64 KiB of
// stack each: the stale return slots then lie far below anything the
// program writes after the jump.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/level_mode_frame.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kRounds = 20;

// (level, mode, frame bytes)
using Param = LevelModeFrame;

class ReturnJumps : public ::testing::TestWithParam<Param> {
 protected:
  std::string level() const { return std::get<0>(GetParam()); }
  std::string mode() const { return std::get<1>(GetParam()); }
  std::string frame() const { return std::get<2>(GetParam()); }
};

TEST_P(ReturnJumps, StaleInstancesAreCountedAndLaterReturnsTraced) {
  const RunResult result = run_traced(
      {"r:j/jumper jumper n=$arg1:s64 rv=$retval:s64",
       "r:j/other other j=$arg1:s64 rv=$retval:s64"},
      {program("ret_jumps_" + level()), mode(), std::to_string(kRounds), frame()}, {"--profile"});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("jumps: ok\n")) << result;
  const auto lines = parse_trace(result.out);

  // other(j) before each round's jump, other(1000 + j) in the handler
  // before it jumps (handler mode), then other(100..102): all returned.
  const bool in_handler = mode() == "handler";
  std::vector<long> others;
  for (long j = 0; j < static_cast<long>(kRounds); ++j) {
    others.push_back(j);
    if (in_handler) others.push_back(1000 + j);
  }
  for (long j = 100; j < 103; ++j) others.push_back(j);
  const auto other = lines_of(lines, "other");
  ASSERT_EQ(other.size(), others.size()) << result;
  for (size_t i = 0; i < others.size(); ++i) {
    EXPECT_THAT(other[i].args, ElementsAre(TraceArg{"j", std::to_string(others[i])},
                                           TraceArg{"rv", std::to_string(others[i] * 3)}))
        << other[i];
  }

  // The jumper frames that jumped never return; the 3 calls after the
  // rounds return 4 times each, innermost first.
  const auto jumper = lines_of(lines, "jumper");
  ASSERT_EQ(jumper.size(), 3u * 4) << result;
  for (size_t call = 0; call < 3; ++call) {
    for (long n = 0; n < 4; ++n) {
      const TraceLine& line = jumper[4 * call + static_cast<size_t>(n)];
      EXPECT_THAT(line.args, ElementsAre(TraceArg{"n", std::to_string(n)},
                                         TraceArg{"rv", std::to_string(n * (n + 1) / 2)}))
          << line;
    }
  }
  const auto rows = parse_profile(result.err);
  const auto jumper_row = profile_row(rows, "jumper");
  const auto other_row = profile_row(rows, "other");
  ASSERT_TRUE(jumper_row && other_row) << result;
  EXPECT_EQ(jumper_row->hits, 4 * kRounds + 3 * 4);
  EXPECT_EQ(jumper_row->misses, 4 * kRounds) << "every stale instance, and nothing else";
  EXPECT_EQ(other_row->hits, others.size());
  EXPECT_EQ(other_row->misses, 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes, ReturnJumps,
                         ::testing::Combine(::testing::Values("O0", "O2"),
                                            ::testing::Values("longjmp", "siglongjmp", "handler"),
                                            ::testing::Values("0", "65536")),
                         level_mode_frame_name);

}  // namespace
}  // namespace dprobe::integration
