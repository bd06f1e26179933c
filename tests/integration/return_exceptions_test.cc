// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C++ exceptions thrown through return-probed frames
// (tests/programs/ret_exceptions.cc), at -O0 and -O2: the program's catch
// still catches the right exception, every destructor on the way runs
// (the program checks both and exits 0 only then), the unwound instances
// are counted as misses, and the calls after are traced with the right
// values. The catch is in the probed function's direct caller, two
// frames further up, in a probed function itself, and in a probed
// function that rethrows; the unwound frames have cleanups (destructors)
// or none at all, with a small stack or 64 KiB of stack each.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/level_mode_frame.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kRounds = 10;

// Per round: the probed frames each mode unwinds, by event.
struct Unwound {
  uint64_t thrower = 0;
  uint64_t bare = 0;
  uint64_t rethrower = 0;
  bool middle_returns = false;
};

Unwound unwound_per_round(const std::string& mode) {
  if (mode == "direct") return {.thrower = 1};
  if (mode == "up") return {.thrower = 5};
  if (mode == "middle") return {.thrower = 3, .middle_returns = true};
  if (mode == "rethrow") return {.thrower = 2, .rethrower = 1};
  return {.bare = 5};  // bare
}

using Param = LevelModeFrame;

class ReturnExceptions : public ::testing::TestWithParam<Param> {
 protected:
  std::string level() const { return std::get<0>(GetParam()); }
  std::string mode() const { return std::get<1>(GetParam()); }
  std::string frame() const { return std::get<2>(GetParam()); }
};

// thrower(0, -1) and bare_thrower(0, -1), twice each after the rounds,
// return 3 times each: depth 2 answers 2, depth 1 answers 3, depth 0 3.
void expect_normal_returns(const std::vector<TraceLine>& lines, const std::string& function) {
  ASSERT_EQ(lines.size(), 6u);
  for (size_t call = 0; call < 2; ++call) {
    EXPECT_THAT(lines[3 * call].args, ElementsAre(TraceArg{"d", "2"}, TraceArg{"rv", "2"}));
    EXPECT_THAT(lines[3 * call + 1].args, ElementsAre(TraceArg{"d", "1"}, TraceArg{"rv", "3"}));
    EXPECT_THAT(lines[3 * call + 2].args, ElementsAre(TraceArg{"d", "0"}, TraceArg{"rv", "3"}));
    EXPECT_THAT(lines[3 * call].location, StartsWith(function + "+0x"));
    EXPECT_THAT(lines[3 * call + 2].location, StartsWith("main+0x"));
  }
}

TEST_P(ReturnExceptions, CatchCatchesDestructorsRunUnwoundInstancesCounted) {
  const RunResult result = run_traced(
      {"r:x/thrower thrower d=$arg1:s32 rv=$retval:s32",
       "r:x/bare bare_thrower d=$arg1:s32 rv=$retval:s32", "r:x/middle middle rv=$retval:s32",
       "r:x/rethrower rethrower rv=$retval:s32", "r:x/after after r=$arg1:s64 rv=$retval:s64"},
      {program("ret_exceptions_" + level()), mode(), std::to_string(kRounds), frame()},
      {"--profile"});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("exceptions: ok\n")) << result;
  const Unwound unwound = unwound_per_round(mode());
  const auto lines = parse_trace(result.out);

  const auto after = lines_of(lines, "after");
  ASSERT_EQ(after.size(), kRounds) << result;
  for (uint64_t r = 0; r < kRounds; ++r) {
    EXPECT_THAT(after[r].args, ElementsAre(TraceArg{"r", std::to_string(r)},
                                           TraceArg{"rv", std::to_string(r + 500)}))
        << after[r];
  }
  const auto middle = lines_of(lines, "middle");
  ASSERT_EQ(middle.size(), unwound.middle_returns ? kRounds : 0) << result;
  for (const TraceLine& line : middle) {
    EXPECT_THAT(line.args, ElementsAre(TraceArg{"rv", "102"})) << line;
    EXPECT_THAT(line.location, StartsWith("main+0x")) << line;
  }
  EXPECT_EQ(lines_of(lines, "rethrower").size(), 0u) << "rethrower never returns";
  {
    SCOPED_TRACE("thrower");
    expect_normal_returns(lines_of(lines, "thrower"), "thrower");
  }
  {
    SCOPED_TRACE("bare_thrower");
    expect_normal_returns(lines_of(lines, "bare"), "bare_thrower");
  }

  const auto rows = parse_profile(result.err);
  const std::map<std::string, std::pair<uint64_t, uint64_t>> expected = {
      {"thrower", {kRounds * unwound.thrower + 6, kRounds * unwound.thrower}},
      {"bare", {kRounds * unwound.bare + 6, kRounds * unwound.bare}},
      {"middle", {unwound.middle_returns ? kRounds : 0, 0}},
      {"rethrower", {kRounds * unwound.rethrower, kRounds * unwound.rethrower}},
      {"after", {kRounds, 0}}};
  for (const auto& [event, counts] : expected) {
    const auto row = profile_row(rows, event);
    ASSERT_TRUE(row) << event << "\n" << result;
    EXPECT_EQ(row->hits, counts.first) << event;
    EXPECT_EQ(row->misses, counts.second) << event << ": the unwound instances, no others";
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, ReturnExceptions,
                         ::testing::Combine(::testing::Values("O0", "O2"),
                                            ::testing::Values("direct", "up", "middle", "rethrow",
                                                              "bare"),
                                            ::testing::Values("0", "65536")),
                         level_mode_frame_name);

}  // namespace
}  // namespace dprobe::integration
