// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Threads and return probes (tests/programs/ret_threads.c), at -O0 and
// -O2: a thread that leaves with live instances (pthread_exit from inside
// probed frames, pthread_cancel while blocked inside them) does not crash
// the program, its cleanup handler runs, its live instances are counted
// as misses and the other threads are traced as before; 8 threads x
// 10,000 return-probed calls, each thread's returns exact and in order;
// and more threads than ring slots: every return hit is traced or counted;
// waves of threads: the return instances of exited threads come back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ReturnThreads : public ::testing::TestWithParam<const char*> {
 protected:
  std::string exe() const { return program(std::string("ret_threads_") + GetParam()); }
};

// nest(3, how) .. nest(0, how) returning normally: 4 lines, innermost first.
void expect_nest_returns(const std::vector<TraceLine>& lines, size_t from) {
  ASSERT_GE(lines.size(), from + 4);
  for (long n = 0; n < 4; ++n) {
    const TraceLine& line = lines[from + static_cast<size_t>(n)];
    EXPECT_THAT(line.args, ElementsAre(TraceArg{"n", std::to_string(n)}, TraceArg{"how", "2"},
                                       TraceArg{"rv", std::to_string(n * (n + 1) / 2)}))
        << line;
  }
}

void leaves_with_live_instances(const std::string& exe, const std::string& mode) {
  const RunResult result = run_traced({"r:t/nest nest n=$arg1:s64 how=$arg2:s64 rv=$retval:s64",
                                       "r:t/work work t=$arg1:s64 i=$arg2:s64 rv=$retval:s64"},
                                      {exe, mode}, {"--profile"});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("threads: ok\n")) << result;
  const auto lines = parse_trace(result.out);

  // The leaving thread's 4 nest frames never return; main's nest(3, 2)
  // and the normal thread's do: 8 lines, 4 per thread, in order.
  const auto nest = lines_of(lines, "nest");
  ASSERT_EQ(nest.size(), 8u) << result;
  expect_nest_returns(nest, 0);
  expect_nest_returns(nest, 4);
  EXPECT_NE(nest[0].tid, nest[4].tid) << "main, then another thread";
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(nest[i].tid, nest[0].tid);
    EXPECT_EQ(nest[4 + i].tid, nest[4].tid);
  }

  // The other thread (main) meanwhile: every return, right values.
  const auto work = lines_of(lines, "work");
  ASSERT_EQ(work.size(), 1000u) << result;
  for (size_t i = 0; i < work.size(); ++i) {
    EXPECT_EQ(work[i].tid, nest[0].tid) << work[i];
    EXPECT_THAT(work[i].args,
                ElementsAre(TraceArg{"t", "-1"}, TraceArg{"i", std::to_string(i)},
                            TraceArg{"rv", std::to_string(-1000000L + static_cast<long>(i))}))
        << work[i];
  }

  const auto rows = parse_profile(result.err);
  const auto nest_row = profile_row(rows, "nest");
  const auto work_row = profile_row(rows, "work");
  ASSERT_TRUE(nest_row && work_row) << result;
  EXPECT_EQ(nest_row->hits, 12u);
  EXPECT_EQ(nest_row->misses, 4u) << "the leaving thread's 4 live instances";
  EXPECT_EQ(work_row->hits, 1000u);
  EXPECT_EQ(work_row->misses, 0u);
}

TEST_P(ReturnThreads, PthreadExitFromInsideProbedFrames) {
  leaves_with_live_instances(exe(), "exit");
}

TEST_P(ReturnThreads, PthreadCancelWhileBlockedInsideProbedFrames) {
  leaves_with_live_instances(exe(), "cancel");
}

TEST_P(ReturnThreads, EightThreadsTenThousandReturnsEachExact) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace_file = dir.file("trace");
  const RunResult result =
      run_traced({"r:t/work work t=$arg1:s64 i=$arg2:s64 rv=$retval:s64"}, {exe(), "many"},
                 {"--profile", "--buffer-size", "4M", "-o", trace_file});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("threads: ok\n")) << result;
  // Nothing on stderr but the profile's one row: no warning.
  EXPECT_EQ(parse_profile(result.err).size(), 1u) << result;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result;
  const auto row = profile_row(parse_profile(result.err), "work");
  ASSERT_TRUE(row) << result;
  EXPECT_EQ(row->hits, 80000u);
  EXPECT_EQ(row->misses, 0u);

  const auto lines = parse_trace(read_file(trace_file));
  ASSERT_EQ(lines.size(), 80000u);
  struct PerThread {
    uint64_t tid = 0;
    long next = 0;
    bool right = true;
  };
  std::map<std::string, PerThread> threads;
  for (const TraceLine& line : lines) {
    const std::string t = line.arg("t");
    PerThread& thread = threads[t];
    if (thread.next == 0) thread.tid = line.tid;
    const long expected_rv = std::stol(t) * 1000000 + thread.next;
    if (line.tid != thread.tid || line.arg("i") != std::to_string(thread.next) ||
        line.arg("rv") != std::to_string(expected_rv) || line.location.find("many+0x") != 0) {
      if (thread.right) ADD_FAILURE() << "first wrong line of thread " << t << ": " << line;
      thread.right = false;
    }
    ++thread.next;
  }
  ASSERT_EQ(threads.size(), 8u);
  for (const auto& [t, thread] : threads) EXPECT_EQ(thread.next, 10000) << "thread " << t;
}

// 300 threads alive together, each with one return-probed call, and 256
// ring slots: the calls of the threads that found no slot cannot be
// traced, but each must be counted, as a hit and as a record lost, for the
// return event as for the entry event beside it ("nothing is lost
// silently").
TEST_P(ReturnThreads, MoreThreadsThanRingsEveryReturnTracedOrCounted) {
  const RunResult result =
      run_traced({"r:t/work work t=$arg1:s64 rv=$retval:s64", "p:t/workin work t=%di:s64"},
                 {exe(), "crowd"}, {"--profile", "--buffer-size", "64K"});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("threads: ok\n")) << result;
  const auto lines = parse_trace(result.out);
  const auto rows = parse_profile(result.err);
  size_t traced = 0;
  for (const char* event : {"work", "workin"}) {
    const auto row = profile_row(rows, event);
    ASSERT_TRUE(row) << event << "\n" << result;
    EXPECT_EQ(row->hits, 300u) << event;
    EXPECT_EQ(row->misses, 0u) << event << ": every handler ran";
    traced += lines_of(lines, event).size();
  }
  EXPECT_EQ(traced + lost_events(result.err), 600u) << "traced + lost = calls, both events";
  for (const TraceLine& line : lines_of(lines, "work")) {
    EXPECT_EQ(line.arg("rv"), std::to_string(std::stol(line.arg("t")) * 1000000)) << line;
  }
}

// 4,000 threads one after another, 256 rings: once they run short, each
// new thread takes over the ring of one that has exited, and every call is
// traced (with rings given back by the agent's passes alone, every 50 ms
// or 5 ms, 89 to 91% were).
TEST_P(ReturnThreads, ThreadsStartingOneAfterAnotherGetRingsBackSoon) {
  const RunResult result = run_traced({"r:t/work work t=$arg1:s64 rv=$retval:s64"},
                                      {exe(), "churn"}, {"--profile", "--buffer-size", "64K"});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("threads: ok\n")) << result;
  const auto row = profile_row(parse_profile(result.err), "work");
  ASSERT_TRUE(row) << result;
  const size_t traced = lines_of(parse_trace(result.out), "work").size();
  EXPECT_EQ(row->hits, 4000u);
  EXPECT_EQ(row->misses, 0u) << "every handler ran";
  EXPECT_EQ(lost_events(result.err), 0u) << result;
  EXPECT_EQ(traced, 4000u) << "every call traced";
}

// A thread keeps the instances it freed for its next calls; once it has
// exited they go back to every thread. 4,200 threads in waves, 8 returns
// each: more instances than there are, so each wave needs those of the
// waves before it.
TEST_P(ReturnThreads, ExitedThreadsGiveTheirInstancesBack) {
  const RunResult result = run_traced({"r:t/nest nest n=$arg1:s64 rv=$retval:s64"},
                                      {exe(), "waves"}, {"--profile", "--buffer-size", "64K"});
  ASSERT_EQ(result.status, 0) << result;
  EXPECT_THAT(result.out, HasSubstr("threads: ok\n")) << result;
  const auto row = profile_row(parse_profile(result.err), "nest");
  ASSERT_TRUE(row) << result;
  EXPECT_EQ(row->hits, 4200u * 8);
  EXPECT_EQ(row->misses, 0u);
  EXPECT_EQ(lines_of(parse_trace(result.out), "nest").size(), 4200u * 8);
}

INSTANTIATE_TEST_SUITE_P(Levels, ReturnThreads, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
