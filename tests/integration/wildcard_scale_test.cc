// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A wildcard over a whole library: every function of the C library that
// can be probed is, the program runs to its end as it would untraced, and
// the functions the agent refuses are one summary, not an error each.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

size_t count_of(const std::string& text, const std::string& word) {
  size_t count = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

std::set<std::string> events_hit(const std::string& trace) {
  std::set<std::string> events;
  for (const TraceLine& line : parse_trace(trace)) events.insert(line.event);
  return events;
}

TEST(WildcardScale, EveryFunctionOfLibcInAThreadedProgram) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult run =
      run_traced({"p libc.so.6:*"}, {program("threads_O2"), "4", "100"}, {"-o", dir.file("trace")});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("threads: ok")) << run;
  const std::set<std::string> events = events_hit(read_file(dir.file("trace")));
  if (breakpoints_only()) {
    // The functions the C library runs with every signal blocked.
    EXPECT_EQ(count_of(run.err, "functions not probed"), 1u) << run.err;
    EXPECT_THAT(run.err, HasSubstr("(BLACKLISTED): ")) << run.err;
  } else {
    // ...take a jump, written before the program runs; but _exit, where
    // dprobe run holds the program's exit until the trace is written.
    EXPECT_THAT(run.err, ContainsRegex(": 1 of [0-9]+ functions not probed")) << run.err;
    EXPECT_THAT(run.err, ContainsRegex("\\(BLACKLISTED\\): _[eE]xit")) << run.err;
    EXPECT_TRUE(events.contains("p_madvise_0")) << "threads' stacks go back with madvise";
  }
  EXPECT_THAT(run.err, Not(HasSubstr("dprobe: error"))) << run.err;
  // 46 on Debian 12's glibc: the program's own calls only (the agent's
  // calls and aliases of one function, which made it over 50, no longer
  // count), to the stdio flush at its exit.
  EXPECT_GT(events.size(), 40u) << "distinct libc functions hit";
  EXPECT_TRUE(events.contains("p_pthread_create_0"));
  EXPECT_TRUE(events.contains("p_malloc_0"));
}

TEST(WildcardScale, RealProgramsRunToTheirEnd) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file("a"), "");
  const RunResult ls = run_traced({"p libc.so.6:*"}, {"ls", dir.path()}, {"-o", dir.file("t1")});
  EXPECT_EQ(ls.status, 0) << ls;
  EXPECT_EQ(ls.out, "a\nt1\n") << ls;
  const RunResult shell =
      run_traced({"p libc.so.6:*"}, {"sh", "-c", "echo one | cat"}, {"-o", dir.file("t2")});
  EXPECT_EQ(shell.status, 0) << shell;
  EXPECT_EQ(shell.out, "one\n") << shell;
}

// The wildcard's refusals do not end the session; a probe written on its
// own that the agent refuses does, with its own error.
TEST(WildcardScale, AnExplicitRefusalStillEndsTheSession) {
  const RunResult run = run_traced({"p libc.so.6:*", "r:one/vfork libc.so.6:vfork"},
                                   {program("threads_O2"), "1", "1"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_EQ(count_of(run.err, "dprobe: error: Probe point is on the blacklist (BLACKLISTED)"), 1u)
      << run.err;
  EXPECT_THAT(run.err, HasSubstr("libc.so.6:vfork")) << run.err;
}

}  // namespace
}  // namespace dprobe::integration
