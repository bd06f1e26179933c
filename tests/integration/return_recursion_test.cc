// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Return probes on deep recursion (tests/programs/ret_recursion.c), at -O0
// and -O2. rec(DEPTH) nests DEPTH + 1 calls, rec(DEPTH) the outermost: the
// first MAXACTIVE of them to enter get an instance, the deeper ones are
// misses (counted, not traced). So per top-level call exactly the
// outermost MAXACTIVE returns are traced, innermost first: n = DEPTH -
// MAXACTIVE + 1 .. DEPTH, each with rv = n (n + 1) / 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class ReturnRecursion : public ::testing::TestWithParam<const char*> {
 protected:
  std::string exe() const { return program(std::string("ret_recursion_") + GetParam()); }

  RunResult run(const std::vector<std::string>& definitions, long depth, long times) const {
    RunResult result = run_traced(
        definitions, {exe(), std::to_string(depth), std::to_string(times)}, {"--profile"});
    EXPECT_EQ(result.status, 0) << result;
    EXPECT_THAT(result.out, HasSubstr("recursion: ok\n")) << result;
    return result;
  }

  // `lines` holds `times` rounds of the outermost `traced` returns of
  // rec(depth), each round followed by one leaf line.
  static void expect_rounds(const std::vector<TraceLine>& lines, const std::string& event,
                            long depth, long times, long traced) {
    ASSERT_EQ(lines.size(), static_cast<size_t>(times * (traced + 1)));
    size_t at = 0;
    for (long t = 0; t < times; ++t) {
      for (long n = depth - traced + 1; n <= depth; ++n) {
        const TraceLine& line = lines[at++];
        EXPECT_EQ(line.event, event) << line;
        EXPECT_THAT(line.args, ElementsAre(TraceArg{"n", std::to_string(n)},
                                           TraceArg{"rv", std::to_string(n * (n + 1) / 2)}))
            << line;
        // rec(depth) returns to main, every other rec to rec.
        EXPECT_THAT(line.location, StartsWith(n == depth ? "main+0x" : "rec+0x")) << line;
        EXPECT_THAT(line.location, EndsWith(" <- rec")) << line;
      }
      const TraceLine& leaf = lines[at++];
      EXPECT_EQ(leaf.event, "leaf") << leaf;
      EXPECT_THAT(leaf.args, ElementsAre(TraceArg{"rv", std::to_string(t * 7)})) << leaf;
    }
  }

  static void expect_profile(const RunResult& result, const std::string& event, uint64_t hits,
                             uint64_t misses) {
    const auto row = profile_row(parse_profile(result.err), event);
    ASSERT_TRUE(row) << event << "\n" << result;
    EXPECT_EQ(row->hits, hits) << event;
    EXPECT_EQ(row->misses, misses) << event;
  }
};

constexpr const char* kLeaf = "r:q/leaf leaf rv=$retval:s64";

TEST_P(ReturnRecursion, MaxactiveTenAtDepthTwoHundred) {
  const RunResult result = run({"r10:q/rec rec n=$arg1:s64 rv=$retval:s64", kLeaf}, 200, 3);
  expect_rounds(parse_trace(result.out), "rec", 200, 3, 10);
  expect_profile(result, "rec", 3 * 201, 3 * 191);
  expect_profile(result, "leaf", 3, 0);
}

TEST_P(ReturnRecursion, DefaultMaxactiveIsSixtyFour) {
  const RunResult result = run({"r:q/rec rec n=$arg1:s64 rv=$retval:s64", kLeaf}, 200, 3);
  expect_rounds(parse_trace(result.out), "rec", 200, 3, 64);
  expect_profile(result, "rec", 3 * 201, 3 * 137);
}

TEST_P(ReturnRecursion, MaxactiveOneTracesTheOutermostCallOnly) {
  const RunResult result = run({"r1:q/rec rec n=$arg1:s64 rv=$retval:s64", kLeaf}, 200, 2);
  expect_rounds(parse_trace(result.out), "rec", 200, 2, 1);
  expect_profile(result, "rec", 2 * 201, 2 * 200);
}

// Within MAXACTIVE nothing is missed, whatever the depth.
TEST_P(ReturnRecursion, EveryCallTracedWhenMaxactiveSuffices) {
  const RunResult result = run({"r300:q/rec rec n=$arg1:s64 rv=$retval:s64", kLeaf}, 200, 2);
  expect_rounds(parse_trace(result.out), "rec", 200, 2, 201);
  expect_profile(result, "rec", 2 * 201, 0);
}

// docs/language.md: MAXACTIVE goes to 4096 and bounds the live instances
// per thread. r2048 on 1501 nested calls must trace them all.
TEST_P(ReturnRecursion, MaxactiveAboveOneThousandIsHonoured) {
  const RunResult result = run({"r2048:q/rec rec n=$arg1:s64 rv=$retval:s64", kLeaf}, 1500, 1);
  expect_profile(result, "rec", 1501, 0);
  expect_rounds(parse_trace(result.out), "rec", 1500, 1, 1501);
}

// Two return events on one function, each with its own MAXACTIVE: each
// keeps to its own bound.
TEST_P(ReturnRecursion, EachEventKeepsItsOwnMaxactive) {
  const RunResult result = run({"r2:q/two rec n=$arg1:s64 rv=$retval:s64",
                                "r5:q/five rec n=$arg1:s64 rv=$retval:s64", kLeaf},
                               10, 2);
  const auto lines = parse_trace(result.out);
  const auto two = lines_of(lines, "two");
  const auto five = lines_of(lines, "five");
  const auto leaves = lines_of(lines, "leaf");
  ASSERT_EQ(two.size(), 4u) << result;
  ASSERT_EQ(five.size(), 10u) << result;
  ASSERT_EQ(leaves.size(), 2u) << result;
  // Each event's lines, with the leaf line after each round, as one
  // event alone would have them.
  std::vector<TraceLine> two_rounds, five_rounds;
  for (size_t t = 0; t < 2; ++t) {
    for (size_t k = 0; k < 2; ++k) two_rounds.push_back(two[2 * t + k]);
    two_rounds.push_back(leaves[t]);
    for (size_t k = 0; k < 5; ++k) five_rounds.push_back(five[5 * t + k]);
    five_rounds.push_back(leaves[t]);
  }
  expect_rounds(two_rounds, "two", 10, 2, 2);
  expect_rounds(five_rounds, "five", 10, 2, 5);
  expect_profile(result, "two", 2 * 11, 2 * 9);
  expect_profile(result, "five", 2 * 11, 2 * 6);
}

// An entry probe beside the return probe: the lines nest as the calls do,
// rec(5) .. rec(0) in, then rec(0) .. rec(5) out.
TEST_P(ReturnRecursion, EntryAndReturnLinesNestAsTheCalls) {
  const RunResult result =
      run({"p:q/in rec n=%di:s64", "r:q/out rec n=$arg1:s64 rv=$retval:s64"}, 5, 2);
  const auto lines = parse_trace(result.out);
  ASSERT_EQ(lines.size(), 2u * 12) << result;
  for (size_t t = 0; t < 2; ++t) {
    for (long k = 0; k < 6; ++k) {
      const TraceLine& in = lines[12 * t + static_cast<size_t>(k)];
      EXPECT_EQ(in.event, "in") << in;
      EXPECT_THAT(in.args, ElementsAre(TraceArg{"n", std::to_string(5 - k)})) << in;
      EXPECT_EQ(in.location, lines[0].location) << in;
      const TraceLine& out = lines[12 * t + 6 + static_cast<size_t>(k)];
      EXPECT_EQ(out.event, "out") << out;
      EXPECT_THAT(out.args, ElementsAre(TraceArg{"n", std::to_string(k)},
                                        TraceArg{"rv", std::to_string(k * (k + 1) / 2)}))
          << out;
    }
  }
  expect_profile(result, "in", 12, 0);
  expect_profile(result, "out", 12, 0);
}

INSTANTIATE_TEST_SUITE_P(Levels, ReturnRecursion, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
