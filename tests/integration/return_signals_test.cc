// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Signal handlers and fork inside return-probed functions
// (tests/programs/ret_signals.c), at -O0 and -O2:
//   - probed(i) raises a signal from inside itself and the handler calls
//     probed(100 + i) before probed(i) returns: both returns traced, with
//     their own values, the lines nested as the calls; on the thread's own
//     stack, on an alternate signal stack below it, and on one above it
//     (the thread's stack mapped below the alternate one);
//   - an interval timer's handler calls probed() at random points of a
//     loop of probed() calls: the program's values stay right, and every
//     call is either traced, entry and return nested as the calls, or
//     counted as a miss;
//   - a signal sent to the process is handled on the program's thread,
//     and the handler's probed call traced;
//   - fork from inside probed functions: the child returns through them
//     correctly (it prints and exits with the code the parent checks),
//     the parent's returns are traced.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class ReturnSignals : public ::testing::TestWithParam<const char*> {
 protected:
  std::string exe() const { return program(std::string("ret_signals_") + GetParam()); }

  RunResult run(const std::string& mode, const std::vector<std::string>& options = {}) const {
    std::vector<std::string> all = {"--profile"};
    all.insert(all.end(), options.begin(), options.end());
    RunResult result =
        run_traced({"p:s/in probed i=%di:s64", "r:s/out probed i=$arg1:s64 rv=$retval:s64",
                    "r:s/forker forker rv=$retval:s64", "r:s/outer outer rv=$retval:s64"},
                   {exe(), mode}, all);
    EXPECT_EQ(result.status, 0) << result;
    EXPECT_THAT(result.out, HasSubstr("signals: ok\n")) << result;
    return result;
  }

  static void expect_profile(const RunResult& result, const std::string& event, uint64_t hits,
                             uint64_t misses) {
    const auto row = profile_row(parse_profile(result.err), event);
    ASSERT_TRUE(row) << event << "\n" << result;
    EXPECT_EQ(row->hits, hits) << event;
    EXPECT_EQ(row->misses, misses) << event;
  }

  // probed(0..5), probed(1) and probed(4) interrupted by a handler that
  // calls probed(101), probed(104).
  void expect_nested(const std::string& mode) const {
    const RunResult result = run(mode);
    const auto lines = parse_trace(result.out);
    struct Expected {
      const char* event;
      long i;
    };
    const std::vector<Expected> expected = {{"in", 0},    {"out", 0}, {"in", 1}, {"in", 101},
                                            {"out", 101}, {"out", 1}, {"in", 2}, {"out", 2},
                                            {"in", 3},    {"out", 3}, {"in", 4}, {"in", 104},
                                            {"out", 104}, {"out", 4}, {"in", 5}, {"out", 5}};
    ASSERT_EQ(lines.size(), expected.size()) << result;
    for (size_t k = 0; k < expected.size(); ++k) {
      const TraceLine& line = lines[k];
      EXPECT_EQ(line.event, expected[k].event) << k << ": " << line;
      EXPECT_EQ(line.tid, lines[0].tid) << line;
      const std::string i = std::to_string(expected[k].i);
      if (line.event == "in") {
        EXPECT_THAT(line.args, ElementsAre(TraceArg{"i", i})) << line;
        continue;
      }
      EXPECT_THAT(line.args, ElementsAre(TraceArg{"i", i},
                                         TraceArg{"rv", std::to_string(expected[k].i * 2 + 1)}))
          << line;
      if (expected[k].i >= 100) {
        EXPECT_THAT(line.location, StartsWith("on_usr1+0x")) << line;
      } else {
        const std::string& first = lines[1].location;
        EXPECT_THAT(line.location, StartsWith(first.substr(0, first.find('+') + 3)))
            << "called from the loop's function: " << line;
      }
    }
    expect_profile(result, "in", 8, 0);
    expect_profile(result, "out", 8, 0);
  }
};

TEST_P(ReturnSignals, HandlerCallsTheProbedFunctionFromInsideIt) { expect_nested("nested"); }

TEST_P(ReturnSignals, HandlerOnAnAlternateStackBelow) { expect_nested("altstack"); }

TEST_P(ReturnSignals, HandlerOnAnAlternateStackAboveTheThreadStack) {
  expect_nested("altstack-above");
}

TEST_P(ReturnSignals, TimerHandlerCallsAtRandomPointsEveryCallTracedOrCounted) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace_file = dir.file("trace");
  // Room for every record: an optimized probe fills a ring faster than a
  // drain pass comes round on a busy machine (the loop makes a million
  // calls or more while the handler runs 400 times, two records each), and
  // a record lost to a full ring is counted but leaves its call without an
  // entry or a return line. One thread: one ring.
  const RunResult result =
      run("timer", {"-o", trace_file, "--buffer-size", "256M", "--max-threads", "2"});
  ASSERT_EQ(lost_events(result.err), 0u) << result;
  long main_calls = -1, handler_calls = -1;
  std::istringstream out(result.out);
  for (std::string line; std::getline(out, line);) {
    if (line.starts_with("timer: ")) {
      std::sscanf(line.c_str(), "timer: main=%ld handler=%ld", &main_calls, &handler_calls);
    }
  }
  ASSERT_GE(main_calls, 20000) << result;
  // A handler call that lands while the main thread is inside a hit is
  // turned away (as the kernel's kprobe_running() does): an optimized probe
  // spends most of a call there, up to ~93% here. 400 handler calls make
  // "none traced" a one in 10^12 chance, where 50 made it one in 40.
  ASSERT_GE(handler_calls, 400) << result << "\nthe program runs until the handler ran 400 times";
  const uint64_t calls = static_cast<uint64_t>(main_calls + handler_calls);

  const auto lines = parse_trace(read_file(trace_file));
  std::vector<long> open;  // the calls entered and not yet returned, innermost last
  uint64_t ins = 0, outs = 0, handler_outs = 0;
  for (const TraceLine& line : lines) {
    const long i = std::stol(line.arg("i"));
    if (line.event == "in") {
      ++ins;
      open.push_back(i);
      continue;
    }
    ASSERT_EQ(line.event, "out") << line;
    ++outs;
    if (i >= 1000000) ++handler_outs;
    ASSERT_FALSE(open.empty()) << "a return without its entry: " << line;
    ASSERT_EQ(open.back(), i) << "returns nest as the calls: " << line;
    open.pop_back();
    ASSERT_EQ(line.arg("rv"), std::to_string(i * 2 + 1)) << line;
  }
  EXPECT_TRUE(open.empty()) << open.size() << " calls entered never returned";
  EXPECT_EQ(ins, outs);
  EXPECT_GT(handler_outs, 0u) << "some handler calls were traced";
  const auto rows = parse_profile(result.err);
  const auto in = profile_row(rows, "in");
  const auto ret = profile_row(rows, "out");
  ASSERT_TRUE(in && ret) << result;
  EXPECT_EQ(ret->hits, outs) << "each admitted return was traced";
  EXPECT_EQ(ret->hits + ret->misses, calls) << "each call traced or counted";
  EXPECT_EQ(in->hits + in->misses, calls);
}

// A signal sent to the process while its only thread blocks it: once
// unblocked, the program's handler runs on that thread (there is no other
// thread of the program's), and its probed call is traced.
TEST_P(ReturnSignals, ProcessDirectedSignalIsHandledOnTheProgramsThread) {
  const RunResult result = run("process");
  const auto lines = parse_trace(result.out);
  ASSERT_EQ(lines.size(), 2u) << result;
  EXPECT_EQ(lines[0].event, "in");
  EXPECT_THAT(lines[0].args, ElementsAre(TraceArg{"i", "500"}));
  EXPECT_EQ(lines[1].event, "out");
  EXPECT_THAT(lines[1].args, ElementsAre(TraceArg{"i", "500"}, TraceArg{"rv", "1001"}));
  EXPECT_THAT(lines[1].location, StartsWith("on_process_signal+0x"));
  expect_profile(result, "in", 1, 0);
  expect_profile(result, "out", 1, 0);
}

TEST_P(ReturnSignals, ForkFromInsideProbedFunctions) {
  const RunResult result = run("fork");
  EXPECT_THAT(result.out, HasSubstr("child: forker=0 outer=1\n")) << result;
  long child = 0;
  std::istringstream out(result.out);
  for (std::string line; std::getline(out, line);) {
    if (line.starts_with("child pid=")) child = std::stol(line.substr(10));
  }
  ASSERT_GT(child, 0) << result;
  const auto lines = parse_trace(result.out);
  const auto forker = lines_of(lines, "forker");
  const auto outer = lines_of(lines, "outer");
  ASSERT_EQ(forker.size(), 1u) << "the parent's only: " << result;
  ASSERT_EQ(outer.size(), 1u) << result;
  EXPECT_THAT(forker[0].args, ElementsAre(TraceArg{"rv", std::to_string(child)}));
  EXPECT_THAT(forker[0].location, StartsWith("outer+0x"));
  EXPECT_THAT(outer[0].args, ElementsAre(TraceArg{"rv", std::to_string(child + 1)}));
  EXPECT_THAT(outer[0].location, StartsWith("main+0x"));
  EXPECT_EQ(forker[0].tid, outer[0].tid);
  const auto probed = lines_of(lines, "out");
  ASSERT_EQ(probed.size(), 1u) << result;
  EXPECT_THAT(probed[0].args, ElementsAre(TraceArg{"i", "3"}, TraceArg{"rv", "7"}));
  EXPECT_EQ(probed[0].tid, forker[0].tid);
  expect_profile(result, "forker", 1, 0);
  expect_profile(result, "outer", 1, 0);
}

INSTANTIATE_TEST_SUITE_P(Levels, ReturnSignals, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
