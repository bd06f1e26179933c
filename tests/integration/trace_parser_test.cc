// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The integration tests' own readers (dprobe_run.h), on lines written the
// way the kernel writes them: a wrong reader would make every other test
// here pass or fail for the wrong reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;

TEST(TraceParser, KernelLine) {
  const auto line = parse_trace_line(
      "           hello-32029   [001] .....  2646.717852: add: (add+0x0/0x4) a=0 b=0x10\n");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->comm, "hello");
  EXPECT_EQ(line->tid, 32029u);
  EXPECT_EQ(line->cpu, 1u);
  EXPECT_EQ(line->timestamp, "2646.717852");
  EXPECT_EQ(line->event, "add");
  EXPECT_EQ(line->location, "add+0x0/0x4");
  EXPECT_THAT(line->args, ElementsAre(TraceArg{"a", "0"}, TraceArg{"b", "0x10"}));
}

TEST(TraceParser, CommWithDashesAndSpacesAndLongTid) {
  const auto line =
      parse_trace_line("  my-prog 2-x-1234567 [012] .....    86.566478: ev: (0x1234) n=1");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->comm, "my-prog 2-x");
  EXPECT_EQ(line->tid, 1234567u);
  EXPECT_EQ(line->cpu, 12u);
  EXPECT_EQ(line->location, "0x1234");
}

TEST(TraceParser, ValuesWithSpacesQuotesAndBraces) {
  const auto line = parse_trace_line(
      "              ls-1882    [000] .....    86.566478: opendir: (opendir+0x0/0x9a) "
      "path=\"/tmp/a b\" c='x' sp=' ' arr={1,2,3} strs={\"a b\",\"c\"} f=(fault) "
      "s=sym+0x3/0x10 e=\"\"");
  ASSERT_TRUE(line);
  EXPECT_THAT(line->args, ElementsAre(TraceArg{"path", "\"/tmp/a b\""}, TraceArg{"c", "'x'"},
                                      TraceArg{"sp", "' '"}, TraceArg{"arr", "{1,2,3}"},
                                      TraceArg{"strs", "{\"a b\",\"c\"}"}, TraceArg{"f", "(fault)"},
                                      TraceArg{"s", "sym+0x3/0x10"}, TraceArg{"e", "\"\""}));
  EXPECT_EQ(line->arg("c"), "'x'");
  EXPECT_EQ(line->arg("nope"), "<none>");
}

TEST(TraceParser, NoArguments) {
  const auto line = parse_trace_line("   a-1       [000] .....     1.000001: e: (f+0x0/0x1)");
  ASSERT_TRUE(line);
  EXPECT_TRUE(line->args.empty());
  EXPECT_EQ(line->location, "f+0x0/0x1");
}

TEST(TraceParser, OtherLinesAreNotTraceLines) {
  EXPECT_FALSE(parse_trace_line("args: ok"));
  EXPECT_FALSE(parse_trace_line(""));
  EXPECT_FALSE(parse_trace_line("  opendir                     2               0"));
  EXPECT_FALSE(parse_trace_line("x-12 [001] ..... notatime: e: (f) a=1"));
  const auto lines = parse_trace(
      "args: ok\n"
      "   a-1       [000] .....     1.000001: e: (f+0x0/0x1) v=1\n"
      "junk\n"
      "   a-1       [000] .....     1.000002: e: (f+0x0/0x1) v=2");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].arg("v"), "2");
}

TEST(TraceParser, SameEventIgnoresTimeAndCpu) {
  const auto a = parse_trace_line("   a-1       [000] .....     1.000001: e: (f+0x0/0x1) v=1");
  const auto b = parse_trace_line("   a-1       [003] .....     9.000001: e: (f+0x0/0x1) v=1");
  const auto c = parse_trace_line("   a-1       [000] .....     1.000001: e: (f+0x0/0x1) v=2");
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(a->same_event(*b));
  EXPECT_FALSE(a->same_event(*c));
}

TEST(ProfileParser, KprobeProfileRows) {
  const auto rows = parse_profile(
      "  opendir                                                    2               0\n"
      "args: ok\n"
      "  a_very_long_event_name_that_is_longer_than_the_column_of_44 "
      "            123              45\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].event, "opendir");
  EXPECT_EQ(rows[0].hits, 2u);
  EXPECT_EQ(rows[0].misses, 0u);
  EXPECT_EQ(rows[1].event, "a_very_long_event_name_that_is_longer_than_the_column_of_44");
  EXPECT_EQ(rows[1].hits, 123u);
  EXPECT_EQ(rows[1].misses, 45u);
  EXPECT_TRUE(profile_row(rows, "opendir"));
  EXPECT_FALSE(profile_row(rows, "other"));
}

}  // namespace
}  // namespace dprobe::integration
