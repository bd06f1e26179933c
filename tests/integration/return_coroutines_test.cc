// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Return-probed frames on two stacks of one thread, switched with
// swapcontext(3) (tests/programs/ret_coroutines.c), at -O0 and -O2: a
// probed frame of the coroutine stays live while main's probed calls
// return and new ones are made, and returns later. Each call must return
// where it was called from (the program checks every value, and that the
// coroutine's call came back to the coroutine), and each return is traced
// with its own value, or counted as a miss.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class ReturnCoroutines : public ::testing::TestWithParam<const char*> {
 protected:
  std::string exe() const { return program(std::string("ret_coroutines_") + GetParam()); }
};

TEST_P(ReturnCoroutines, ProbedFrameLiveOnAnotherStackReturnsWhereItWasCalled) {
  const RunResult result = run_traced({"r:c/c_probed c_probed x=$arg1:s64 rv=$retval:s64",
                                       "r:c/m_probed m_probed x=$arg1:s64 rv=$retval:s64",
                                       "r:c/m_switch m_switch x=$arg1:s64 rv=$retval:s64",
                                       "r:c/m_outer m_outer x=$arg1:s64 rv=$retval:s64"},
                                      {exe()}, {"--profile"});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("coroutine: c_probed=14\n")) << result;
  EXPECT_THAT(result.out, HasSubstr("coroutines: ok\n")) << result;

  const auto lines = parse_trace(result.out);
  const auto m_switch = lines_of(lines, "m_switch");
  ASSERT_EQ(m_switch.size(), 2u) << result;
  EXPECT_THAT(m_switch[0].args, ElementsAre(TraceArg{"x", "1"}, TraceArg{"rv", "5"}));
  EXPECT_THAT(m_switch[0].location, StartsWith("main+0x"));
  EXPECT_THAT(m_switch[1].args, ElementsAre(TraceArg{"x", "3"}, TraceArg{"rv", "15"}));
  EXPECT_THAT(m_switch[1].location, StartsWith("m_outer+0x"));
  const auto m_probed = lines_of(lines, "m_probed");
  ASSERT_EQ(m_probed.size(), 1u) << result;
  EXPECT_THAT(m_probed[0].args, ElementsAre(TraceArg{"x", "2"}, TraceArg{"rv", "6"}));
  const auto m_outer = lines_of(lines, "m_outer");
  ASSERT_EQ(m_outer.size(), 1u) << result;
  EXPECT_THAT(m_outer[0].args, ElementsAre(TraceArg{"x", "3"}, TraceArg{"rv", "16"}));

  // The coroutine's call: traced with its own values, or counted.
  const auto c_probed = lines_of(lines, "c_probed");
  const auto rows = parse_profile(result.err);
  const auto c_row = profile_row(rows, "c_probed");
  ASSERT_TRUE(c_row) << result;
  EXPECT_EQ(c_row->hits, 1u);
  EXPECT_EQ(c_probed.size() + c_row->misses, 1u) << result;
  for (const TraceLine& line : c_probed) {
    EXPECT_THAT(line.args, ElementsAre(TraceArg{"x", "7"}, TraceArg{"rv", "14"})) << line;
    EXPECT_THAT(line.location, StartsWith("coroutine+0x")) << line;
  }
  for (const char* event : {"m_probed", "m_switch", "m_outer"}) {
    const auto row = profile_row(rows, event);
    ASSERT_TRUE(row) << event;
    EXPECT_EQ(row->misses, 0u) << event;
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, ReturnCoroutines, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
