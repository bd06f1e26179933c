// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// SDT probe points (%sdt_PROVIDER:NAME) under `dprobe run` and `attach`:
// every site's events with the values the program passed; a semaphore
// counted up while the point is traced and given back at the detach; the
// points Debian's python3.11 and libstdc++ were built with. The kernel's
// uprobes give the same values and counts (tests/oracle/run_sdt.sh).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "dprobe_run.h"
#include "live_process.h"

namespace dprobe::integration {
namespace {

constexpr const char* kPython = "/usr/bin/python3.11";

std::vector<TraceLine> events_named(const std::vector<TraceLine>& lines, std::string_view prefix) {
  std::vector<TraceLine> out;
  for (const TraceLine& line : lines) {
    if (line.event.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

class SdtProgram : public ::testing::TestWithParam<const char*> {};

// Round i passes i, -1e9 i, -300 + i and the running counter to `values`,
// a word, -i and 42 to `text`, 3 i to `guarded`, and i (even) or -i (odd,
// the point's other site) to `twice`.
TEST_P(SdtProgram, EveryPointFiresWithTheValuesItWasPassed) {
  const std::string prog = program(GetParam());
  constexpr size_t kRounds = 6;
  const RunResult run =
      run_traced({"p " + prog + ":%sdt_dprobe_test:*",
                  "p:t/word " + prog + ":%sdt_dprobe_test:text w=+0($arg1):string"},
                 {prog, std::to_string(kRounds)});
  ASSERT_EQ(run.status, 0) << run;
  // The semaphore was up: the guarded point was reached every round.
  EXPECT_THAT(run.out, ::testing::HasSubstr("guarded 6\n")) << run;
  const std::vector<TraceLine> lines = parse_trace(run.out);
  const auto values = events_named(lines, "values");
  const auto text = events_named(lines, "text");
  const auto words = events_named(lines, "word");
  const auto guarded = events_named(lines, "guarded");
  const auto twice = events_named(lines, "twice");
  ASSERT_EQ(values.size(), kRounds) << run;
  ASSERT_EQ(text.size(), kRounds) << run;
  ASSERT_EQ(words.size(), kRounds) << run;
  ASSERT_EQ(guarded.size(), kRounds) << run;
  ASSERT_EQ(twice.size(), kRounds) << run;
  const char* const kWords[] = {"\"alpha\"", "\"beta\"", "\"gamma delta\"", "\"\""};
  long counter = 1000;
  for (size_t n = 0; n < kRounds; ++n) {
    const int i = static_cast<int>(n);
    counter += i;
    EXPECT_EQ(values[n].arg("arg1"), std::to_string(i));
    EXPECT_EQ(values[n].arg("arg2"), std::to_string(-1000000000L * i));
    EXPECT_EQ(values[n].arg("arg3"), std::to_string(-300 + i));
    EXPECT_EQ(values[n].arg("arg4"), std::to_string(counter));
    EXPECT_EQ(text[n].arg("arg2"), std::to_string(-i));
    EXPECT_EQ(text[n].arg("arg3"), "42");
    EXPECT_EQ(words[n].arg("w"), kWords[n % 4]);
    EXPECT_EQ(guarded[n].arg("arg1"), std::to_string(3 * i));
    const bool even = i % 2 == 0;
    EXPECT_EQ(twice[n].event, even ? "twice" : "twice_1");
    EXPECT_EQ(twice[n].arg("arg1"), std::to_string(even ? i : -i));
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, SdtProgram, ::testing::Values("sdt_points_O0", "sdt_points_O2"));

// Built without semaphores, its notes name none: the points fire all the
// same, and nothing is written into the program's data.
TEST(Sdt, PointsWithoutSemaphoresFireAsTheOthers) {
  const std::string prog = program("sdt_plain_O2");
  const RunResult untraced = run_program({prog, "4"});
  EXPECT_EQ(untraced.out, "guarded 4\n");
  const RunResult run = run_traced({"p " + prog + ":%sdt_dprobe_test:guarded"}, {prog, "4"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_EQ(events_named(parse_trace(run.out), "guarded").size(), 4u) << run;
}

// Attached for a second to a program running rounds: the guarded point is
// reached only meanwhile, and its semaphore is back at 0 afterwards.
TEST(Sdt, TheSemaphoreIsUpWhileAttachedAndBackAfterTheDetach) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string prog = program("sdt_points_O2");
  const std::string stop = dir.file("stop");
  LiveProcess rounds({prog, "0", stop}, dir.file("out"), dir.file("err"));
  ASSERT_TRUE(rounds.started() && rounds.wait_for_output("ready", patience(2))) << rounds.err();
  const RunResult run = run_dprobe({"attach", "-p", std::to_string(rounds.pid()), "-e",
                                    "p " + prog + ":%sdt_dprobe_test:guarded", "--duration", "1"});
  ASSERT_EQ(run.status, 0) << run;
  const size_t traced = events_named(parse_trace(run.out), "guarded").size();
  EXPECT_GT(traced, 0u) << run;
  write_file(stop, "");
  ASSERT_EQ(rounds.wait(patience(3)), 0) << rounds.err();
  const std::string out = rounds.out();
  const auto total = last_number_after(out, "rounds ");
  const auto guarded = last_number_after(out, "guarded ");
  ASSERT_TRUE(total && guarded) << out;
  // Each event is a pass through the guard. The semaphore goes down before
  // the recording stops, so of the guard's passes only a round in flight
  // at that moment (one, a millisecond apart) can go untraced.
  EXPECT_GE(*guarded, traced) << out;
  EXPECT_LE(*guarded, traced + 1) << out;
  EXPECT_LT(*guarded, *total) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("semaphore 0\n"));
}

// Filters, hist triggers and trace files take an SDT point's arguments by
// the names they got, as any event's.
TEST(Sdt, FiltersHistsAndTraceFilesTakeTheOperands) {
  const std::string prog = program("sdt_points_O2");
  const std::string point = "p:s/v " + prog + ":%sdt_dprobe_test:values";
  const RunResult filtered = run_traced({point}, {prog, "6"}, {"--filter", "s/v:arg1 >= 2"});
  ASSERT_EQ(filtered.status, 0) << filtered;
  const auto kept = events_named(parse_trace(filtered.out), "v");
  ASSERT_EQ(kept.size(), 4u) << filtered;
  EXPECT_EQ(kept.front().arg("arg1"), "2");
  const RunResult hist =
      run_traced({point}, {prog, "6"}, {"--trigger", "s/v:hist:keys=arg1:vals=arg4"});
  ASSERT_EQ(hist.status, 0) << hist;
  EXPECT_THAT(hist.out + hist.err,
              ::testing::HasSubstr("{ arg1:          3 } hitcount:          1  arg4:       1006"));
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string file = dir.file("sdt.trace");
  const RunResult recorded = run_dprobe({"record", "-o", file, "-e", point, "--", prog, "3"});
  ASSERT_EQ(recorded.status, 0) << recorded;
  const RunResult report = run_dprobe({"report", file});
  ASSERT_EQ(report.status, 0) << report;
  const auto lines = events_named(parse_trace(report.out), "v");
  ASSERT_EQ(lines.size(), 3u) << report;
  EXPECT_EQ(lines[2].arg("arg2"), "-2000000000");
}

// A point of a library loaded later is armed as the loader maps it, before
// its constructor runs; each new copy's semaphore starts at 0 and is
// counted up again (dl_host loads and unloads the plugin each cycle).
TEST(Sdt, APointOfALibraryLoadedLaterFiresOnEveryLoad) {
  const std::string plugin = program("libdprobe_test_plugin.so");
  const RunResult run = run_traced({"p " + plugin + ":%sdt_dprobe_plugin:called x=$arg1"},
                                   {program("dl_host_O2"), DPROBE_PROGRAMS_DIR, "3", "ctor"});
  ASSERT_EQ(run.status, 0) << run;
  std::vector<std::string> values;
  for (const TraceLine& line : events_named(parse_trace(run.out), "called")) {
    values.push_back(line.arg("x"));
  }
  const std::vector<std::string> cycle = {"-1", "1", "2", "-2"};
  std::vector<std::string> expected;
  for (int i = 0; i < 3; ++i) expected.insert(expected.end(), cycle.begin(), cycle.end());
  EXPECT_EQ(values, expected) << run;
}

// Python 3.11 fires function__return at every return of a Python
// function; its function__entry fires for a few frames only (a generator
// expression's first, a lambda's at import): 3.11's interpreter enters
// most frames without passing that point. The kernel's uprobes see
// exactly the same (tests/oracle/run_sdt.sh compares them).
TEST(Sdt, PythonFunctionsCalledFromCAndItsCollections) {
  if (::access(kPython, X_OK) != 0) GTEST_SKIP() << "needs " << kPython;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file("calls.py"),
             "import gc\n"
             "def visited(x):\n"
             "    return x + 1\n"
             "total = sum(map(visited, range(37)))\n"
             "gc.collect()\n"
             "print(total)\n");
  const std::string py = std::string(kPython) + ":%sdt_python:";
  const RunResult run = run_traced(
      {"p " + py + "function__return file=+0($arg1):string func=+0($arg2):string line=$arg3",
       "p " + py + "gc__start gen=$arg1", "p " + py + "gc__done"},
      {kPython, dir.file("calls.py")});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, ::testing::HasSubstr("703\n")) << run.err;
  const std::vector<TraceLine> lines = parse_trace(run.out);
  size_t returns = 0;
  for (const TraceLine& line : lines) {
    if (line.event == "function__return" && line.arg("func") == "\"visited\"") {
      ++returns;
      EXPECT_EQ(line.arg("file"), "\"" + dir.file("calls.py") + "\"");
      EXPECT_EQ(line.arg("line"), "3");  // the return statement's
    }
  }
  EXPECT_EQ(returns, 37u) << run;
  // gc.collect() collects the oldest generation, 2, between a start and a done.
  bool collected = false;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].event == "gc__start" && lines[i].arg("gen") == "2" &&
        lines[i + 1].event == "gc__done") {
      collected = true;
    }
  }
  EXPECT_TRUE(collected) << run;
}

// With a profile hook set (cProfile here), Python 3.11 passes its
// function__entry point on every call too: entries and returns pair up.
TEST(Sdt, PythonUnderAProfileHookEntersEveryFunction) {
  if (::access(kPython, X_OK) != 0) GTEST_SKIP() << "needs " << kPython;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file("calls.py"),
             "def visited(x):\n"
             "    return x + 1\n"
             "print(sum(visited(i) for i in range(37)))\n");
  const std::string py = std::string(kPython) + ":%sdt_python:";
  const RunResult run =
      run_traced({"p " + py + "function__entry func=+0($arg2):string line=$arg3",
                  "p " + py + "function__return func=+0($arg2):string"},
                 {kPython, "-m", "cProfile", "-o", "/dev/null", dir.file("calls.py")});
  ASSERT_EQ(run.status, 0) << run;
  size_t entries = 0;
  size_t returns = 0;
  for (const TraceLine& line : parse_trace(run.out)) {
    if (line.arg("func") != "\"visited\"") continue;
    if (line.event == "function__entry") {
      ++entries;
      EXPECT_EQ(line.arg("line"), "1");  // the def's line
    }
    if (line.event == "function__return") ++returns;
  }
  EXPECT_EQ(entries, 37u) << run;
  EXPECT_EQ(returns, 37u) << run;
}

// A Python function tracer: function__entry and function__return recorded
// under cProfile, drawn as the calls of the script's functions, by their
// names, and tabled with their times.
TEST(Sdt, PythonFunctionsAsAGraphAndATable) {
  if (::access(kPython, X_OK) != 0) GTEST_SKIP() << "needs " << kPython;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string script = dir.file("app.py");
  write_file(script,
             "def leaf(x):\n"
             "    return x + 1\n"
             "def outer():\n"
             "    return [leaf(i) for i in range(3)]\n"
             "outer()\n");
  const std::string py = std::string(kPython) + ":%sdt_python:";
  const std::string file = dir.file("py.dat");
  const RunResult recorded = run_dprobe(
      {"record", "-o", file, "-e",
       "p " + py + "function__entry file=+0($arg1):string func=+0($arg2):string line=$arg3", "-e",
       "p " + py + "function__return func=+0($arg2):string", "--", kPython, "-m", "cProfile", "-o",
       "/dev/null", script});
  ASSERT_EQ(recorded.status, 0) << recorded;
  const RunResult table = run_dprobe({"report", "--functions", file});
  ASSERT_EQ(table.status, 0) << table;
  const std::string leaf = "leaf (" + script + ":1)";
  const std::string outer = "outer (" + script + ":3)";
  // Total, self, calls, average, longest, function: leaf's calls are 3.
  std::istringstream rows(table.out);
  std::string calls;
  for (std::string row; std::getline(rows, row);) {
    if (!row.ends_with("  " + leaf)) continue;
    std::istringstream fields(row);
    std::string total, total_unit, self, self_unit;
    fields >> total >> total_unit >> self >> self_unit >> calls;
  }
  EXPECT_EQ(calls, "3") << table;
  EXPECT_THAT(table.out, ::testing::HasSubstr("  " + outer + "\n")) << table;
  const RunResult graph = run_dprobe({"report", "--graph", file});
  ASSERT_EQ(graph.status, 0) << graph;
  // outer { <listcomp> { leaf; leaf; leaf; } }, in that order.
  const size_t opened = graph.out.find(outer + " {\n");
  const size_t inner = graph.out.find("<listcomp> (" + script + ":4) {\n", opened);
  const size_t first_leaf = graph.out.find(leaf + ";\n", inner);
  EXPECT_NE(opened, std::string::npos) << graph.out.substr(graph.out.size() - 3000);
  EXPECT_NE(inner, std::string::npos);
  EXPECT_NE(first_leaf, std::string::npos);
}

// libstdc++'s own points: one throw and one catch per round of
// ret_exceptions' direct mode.
TEST(Sdt, LibstdcxxThrowsAndCatches) {
  const std::string prog = program("ret_exceptions_O2");
  const RunResult run =
      run_traced({"p libstdc++.so.6:%sdt_libstdcxx:throw", "p libstdc++.so.6:%sdt_libstdcxx:catch"},
                 {prog, "direct", "7"});
  ASSERT_EQ(run.status, 0) << run;
  const std::vector<TraceLine> lines = parse_trace(run.out);
  EXPECT_EQ(events_named(lines, "throw").size(), 7u) << run;
  EXPECT_EQ(events_named(lines, "catch").size(), 7u) << run;
  for (const TraceLine& line : events_named(lines, "throw")) {
    EXPECT_NE(line.arg("arg1"), "0") << line;  // the exception object
  }
}

}  // namespace
}  // namespace dprobe::integration
