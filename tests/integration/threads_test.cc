// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Exact counts under load: 8 threads x 100,000 calls of one probed function
// (tests/programs/threads.c). Every hit is in the profile and in the trace,
// each thread's in the order it made them, none lost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kThreads = 8;
constexpr uint64_t kCalls = 100000;

class Threads : public ::testing::TestWithParam<const char*> {
 protected:
  std::string name() const { return std::string("threads_") + GetParam(); }
};

TEST_P(Threads, EveryHitOfEightThreadsIsCountedAndTraced) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace_file = dir.file("trace");
  // Room for all of a thread's records (100,000 of 56 bytes): optimized
  // probes write them faster than the trace is formatted.
  const RunResult run = run_traced({"p:load/work work t=%di:u64 i=%si:u64"}, {program(name())},
                                   {"--profile", "--buffer-size", "8M", "-o", trace_file});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("threads: ok\n")) << run;
  EXPECT_THAT(run.err, Not(HasSubstr("lost"))) << run;
  // Nothing on stderr but the profile's one row: no warning.
  EXPECT_EQ(parse_profile(run.err).size(), 1u) << run;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run;

  const auto row = profile_row(parse_profile(run.err), "work");
  ASSERT_TRUE(row) << run;
  EXPECT_EQ(row->hits, kThreads * kCalls);
  EXPECT_EQ(row->misses, 0u);

  const std::vector<TraceLine> lines = parse_trace(read_file(trace_file));
  ASSERT_EQ(lines.size(), kThreads * kCalls);
  // Per thread: one tid, one t, and i = 0, 1, 2, ... in order.
  struct PerThread {
    uint64_t tid = 0;
    uint64_t next = 0;
    bool in_order = true;
  };
  std::map<std::string, PerThread> threads;
  for (const TraceLine& line : lines) {
    ASSERT_EQ(line.event, "work");
    ASSERT_EQ(line.comm, name());
    PerThread& thread = threads[line.arg("t")];
    if (thread.next == 0) thread.tid = line.tid;
    EXPECT_EQ(line.tid, thread.tid) << line;
    if (line.arg("i") != std::to_string(thread.next)) thread.in_order = false;
    ++thread.next;
  }
  ASSERT_EQ(threads.size(), kThreads);
  std::map<uint64_t, int> tids;
  for (uint64_t t = 0; t < kThreads; ++t) {
    const PerThread& thread = threads[std::to_string(t)];
    EXPECT_EQ(thread.next, kCalls) << "thread " << t;
    EXPECT_TRUE(thread.in_order) << "thread " << t;
    ++tids[thread.tid];
  }
  EXPECT_EQ(tids.size(), kThreads) << "each thread has its own tid";
}

// A ring far too small for the load: events are lost, and every lost event
// is counted in the report on stderr; the profile counts every hit, and
// misses none (each handler ran), as the kernel's does.
TEST_P(Threads, LostEventsAreCountedNeverSilent) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace_file = dir.file("trace");
  const RunResult run = run_traced({"p:load/work work t=%di:u64 i=%si:u64 pad=+0(%sp):x64[8]"},
                                   {program(name()), "2", std::to_string(kCalls)},
                                   {"--profile", "--buffer-size", "4K", "-o", trace_file});
  ASSERT_EQ(run.status, 0) << run;
  const auto row = profile_row(parse_profile(run.err), "work");
  ASSERT_TRUE(row) << run;
  EXPECT_EQ(row->hits, 2 * kCalls);
  const uint64_t traced = parse_trace(read_file(trace_file)).size();
  EXPECT_EQ(row->misses, 0u) << run;
  // Every hit is either in the trace or counted as lost.
  EXPECT_GT(lost_events(run.err), 0u) << "a 4K ring cannot hold them all\n" << run;
  EXPECT_EQ(traced + lost_events(run.err), 2 * kCalls) << run;
}

// 600 threads one after another, more than dprobe has rings for at once
// (256): once the rings run short, each new thread takes over the ring of
// one that has exited, and every hit is traced.
TEST_P(Threads, ShortLivedThreadsOneAfterAnother) {
  constexpr uint64_t kSerialThreads = 600;
  constexpr uint64_t kSerialCalls = 10;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace_file = dir.file("trace");
  const RunResult run = run_traced(
      {"p:load/work work t=%di:u64 i=%si:u64"},
      {program(name()), std::to_string(kSerialThreads), std::to_string(kSerialCalls), "serial"},
      {"--profile", "-o", trace_file});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("threads: ok\n")) << run;
  const auto row = profile_row(parse_profile(run.err), "work");
  ASSERT_TRUE(row) << run;
  EXPECT_EQ(row->hits, kSerialThreads * kSerialCalls);
  const std::vector<TraceLine> lines = parse_trace(read_file(trace_file));
  EXPECT_EQ(row->misses, 0u) << run;
  EXPECT_EQ(lost_events(run.err), 0u) << run;
  EXPECT_EQ(lines.size(), kSerialThreads * kSerialCalls) << run;
  // The threads ran one at a time: the trace is thread 0's calls, then 1's...
  std::map<std::string, uint64_t> per_thread;
  uint64_t t = 0;
  for (const TraceLine& line : lines) {
    const uint64_t thread = std::stoull(line.arg("t"));
    EXPECT_GE(thread, t) << line;
    t = thread;
    ++per_thread[line.arg("t")];
  }
  EXPECT_EQ(per_thread.size(), kSerialThreads);
  for (const auto& [thread, count] : per_thread) EXPECT_EQ(count, kSerialCalls) << thread;
}

// A thread named before its first hit is traced under its name.
TEST_P(Threads, NamedThreadsAreTracedUnderTheirNames) {
  const RunResult run = run_traced({"p:load/work work t=%di:u64 c=$comm"},
                                   {program(name()), "4", "3", "named"}, {"--profile"});
  ASSERT_EQ(run.status, 0) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 12u) << run;
  for (const TraceLine& line : lines) {
    const std::string expected = "worker-" + line.arg("t");
    EXPECT_EQ(line.comm, expected) << line;
    EXPECT_EQ(line.arg("c"), "\"" + expected + "\"") << line;
  }
}

// The comm is the thread's name at the hit, as the kernel prints it: a
// thread that renames itself is traced under the new name from then on.
TEST_P(Threads, RenamedThreadIsTracedUnderItsNewName) {
  const RunResult run =
      run_traced({"p:load/work work i=%si:u64 c=$comm"}, {program(name()), "1", "1", "rename"});
  ASSERT_EQ(run.status, 0) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 2u) << run;
  EXPECT_EQ(lines[0].comm, name());
  EXPECT_EQ(lines[0].arg("c"), "\"" + name() + "\"");
  EXPECT_EQ(lines[1].comm, "renamed") << lines[1];
  EXPECT_EQ(lines[1].arg("c"), "\"renamed\"") << lines[1];
  EXPECT_EQ(lines[0].tid, lines[1].tid);
}

INSTANTIATE_TEST_SUITE_P(Optimization, Threads, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
