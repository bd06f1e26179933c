// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// --filter on tests/programs/analysis.c, whose calls of take(size, tag)
// follow a known distribution: for each filter, exactly the lines of the
// calls that pass (computed here from the program's loops), in order, per
// thread; the profile's hits, misses and filtered columns; $duration on a
// return probe; the system call events; and bad filters refused with the
// kernel's message and caret (as Linux 6.18's error_log puts them), with
// nothing run. tests/oracle/run_filters.sh holds the same filters against
// the kernel's own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "integration/analysis_support.h"
#include "integration/dprobe_run.h"
#include "integration/syscall_lines.h"

namespace dprobe::integration {
namespace {

using analysis::analysis_path;
using analysis::filtered_row;
using analysis::program_finished;
using analysis::take_calls;
using analysis::take_probe;
using analysis::TakeCall;
using ::testing::HasSubstr;
using ::testing::Not;

// take's probe with s, the size as an s8 (negative for 128..255).
std::string take_probe_signed(std::string_view level = "O2") {
  return take_probe(level) + " s=%di:s8";
}

int64_t as_s8(uint64_t size) { return static_cast<int8_t>(static_cast<uint8_t>(size)); }

// What take's line prints for a call.
std::string take_args(const TakeCall& call, bool with_s) {
  std::string text = "size=" + std::to_string(call.size) + " tag=\"" + call.tag + "\"";
  if (with_s) text += " s=" + std::to_string(as_s8(call.size));
  return text;
}

std::string args_of(const TraceLine& line) {
  std::string text;
  for (const TraceArg& arg : line.args)
    text += (text.empty() ? "" : " ") + arg.name + "=" + arg.value;
  return text;
}

// The calls one thread makes that `keep` lets through, as take's lines print them.
std::vector<std::string> expected_lines(const std::function<bool(const TakeCall&)>& keep,
                                        bool with_s = true) {
  std::vector<std::string> lines;
  for (const TakeCall& call : take_calls()) {
    if (keep(call)) lines.push_back(take_args(call, with_s));
  }
  return lines;
}

struct FilterCase {
  std::string filter;
  std::function<bool(const TakeCall&)> keep;
};

bool glob_al(const std::string& tag) { return tag.starts_with("al"); }

// Each comparison, signed and unsigned, each kind of string test, and the
// ways of combining them.
const std::vector<FilterCase>& filter_cases() {
  static const std::vector<FilterCase> cases = {
      {"size > 290 && tag ~ \"al*\"", [](auto& c) { return c.size > 290 && glob_al(c.tag); }},
      {"size <= 3 || size == 300", [](auto& c) { return c.size <= 3 || c.size == 300; }},
      {"size >= 296 && size != 298", [](auto& c) { return c.size >= 296 && c.size != 298; }},
      {"size < 4", [](auto& c) { return c.size < 4; }},
      {"tag == \"beta\" && size < 12", [](auto& c) { return c.tag == "beta" && c.size < 12; }},
      {"!(size > 5) && tag != \"alpha\"", [](auto& c) { return c.size <= 5 && c.tag != "alpha"; }},
      {"size & 0x100 && (tag ~ \"*ta\" || size == 256)",
       [](auto& c) { return (c.size & 0x100) != 0 && (c.tag == "beta" || c.size == 256); }},
      {"tag ~ \"?lph[a-z]\" && size >= 295",
       [](auto& c) { return c.tag == "alpha" && c.size >= 295; }},
      {"tag ~ \"*et*\" && size < 6", [](auto& c) { return c.tag == "beta" && c.size < 6; }},
      {"tag == \"alp\" || size == 7", [](auto& c) { return c.size == 7; }},
      {"s < -126 || s == -1", [](auto& c) { return as_s8(c.size) < -126 || as_s8(c.size) == -1; }},
      {"s >= -2 && s <= 1", [](auto& c) { return as_s8(c.size) >= -2 && as_s8(c.size) <= 1; }},
      {"comm == \"analysis_O2\" && size < 3", [](auto& c) { return c.size < 3; }},
      {"comm ~ \"analysis*\" && size == 9", [](auto& c) { return c.size == 9; }},
      {"comm != \"analysis_O2\" || size == 5", [](auto& c) { return c.size == 5; }},
      {"((size == 1)) || !(!(size == 300))", [](auto& c) { return c.size == 1 || c.size == 300; }},
      {"size < 3 && tag == \"beta\" || size == 4",
       [](auto& c) { return (c.size < 3 && c.tag == "beta") || c.size == 4; }},
      {"size > 400", [](auto&) { return false; }},
  };
  return cases;
}

// Every filter keeps exactly the calls it should, in the program's order,
// and the profile counts the others as filtered: lines = hits - filtered.
TEST(AnalysisFilter, KeepsExactlyTheCallsThatPass) {
  const uint64_t calls = analysis::take_calls_per_thread();
  for (const FilterCase& c : filter_cases()) {
    SCOPED_TRACE(c.filter);
    const RunResult run = run_traced({take_probe_signed()}, {analysis_path("O2")},
                                     {"--filter", "a/take:" + c.filter, "--profile"});
    ASSERT_EQ(run.status, 0) << run;
    ASSERT_TRUE(program_finished(run)) << run;
    std::vector<std::string> actual;
    for (const TraceLine& line : lines_of(parse_trace(run.out), "take"))
      actual.push_back(args_of(line));
    const std::vector<std::string> expected = expected_lines(c.keep);
    EXPECT_EQ(actual, expected);
    const auto row = filtered_row(run.err, "take");
    ASSERT_TRUE(row) << run.err;
    EXPECT_EQ(row->hits, calls);
    EXPECT_EQ(row->misses, 0u);
    ASSERT_TRUE(row->filtered) << "no filtered column: " << run.err;
    EXPECT_EQ(*row->filtered, calls - expected.size());
  }
}

// The same at -O0 (other registers' history, the same arguments), once.
TEST(AnalysisFilter, SameAtO0) {
  const RunResult run = run_traced({take_probe_signed("O0")}, {analysis_path("O0")},
                                   {"--filter", "a/take:size >= 299 || s == -128"});
  ASSERT_EQ(run.status, 0) << run;
  std::vector<std::string> actual;
  for (const TraceLine& line : lines_of(parse_trace(run.out), "take"))
    actual.push_back(args_of(line));
  EXPECT_EQ(actual, expected_lines([](auto& c) { return c.size >= 299 || c.size == 128; }));
}

// Four threads: each thread's lines are exactly what one thread's calls
// give, and the profile counts every thread's hits.
TEST(AnalysisFilter, EveryThreadFilteredAlike) {
  constexpr int kThreads = 4;
  const std::string filter = "size > 295 || tag == \"beta\" && size < 4";
  const auto keep = [](const TakeCall& c) {
    return c.size > 295 || (c.tag == "beta" && c.size < 4);
  };
  const RunResult run = run_traced({take_probe()}, {analysis_path("O2"), std::to_string(kThreads)},
                                   {"--filter", "a/take:" + filter, "--profile"});
  ASSERT_EQ(run.status, 0) << run;
  ASSERT_TRUE(program_finished(run)) << run;
  std::map<uint64_t, std::vector<std::string>> by_thread;
  for (const TraceLine& line : lines_of(parse_trace(run.out), "take")) {
    by_thread[line.tid].push_back(args_of(line));
  }
  ASSERT_EQ(by_thread.size(), size_t{kThreads}) << run.out.substr(0, 4000);
  const std::vector<std::string> expected = expected_lines(keep, false);
  for (const auto& [tid, lines] : by_thread) EXPECT_EQ(lines, expected) << "thread " << tid;
  const auto row = filtered_row(run.err, "take");
  ASSERT_TRUE(row && row->filtered) << run.err;
  const uint64_t hits = kThreads * analysis::take_calls_per_thread();
  EXPECT_EQ(row->hits, hits);
  EXPECT_EQ(*row->filtered, hits - kThreads * expected.size());
}

// The third column is there for every event once one has a filter (0 for
// the others), and not at all when none has.
TEST(AnalysisFilter, ProfileHasAFilteredColumnOnlyWithAFilter) {
  const std::vector<std::string> probes = {take_probe(), "p:a/nap analysis_O2:nap ms=%di:s64"};
  const RunResult filtered =
      run_traced(probes, {analysis_path("O2")}, {"--filter", "a/take:size == 300", "--profile"});
  ASSERT_EQ(filtered.status, 0) << filtered;
  const auto take = filtered_row(filtered.err, "take");
  const auto nap = filtered_row(filtered.err, "nap");
  ASSERT_TRUE(take && nap) << filtered.err;
  ASSERT_TRUE(take->filtered && nap->filtered) << filtered.err;
  EXPECT_EQ(take->hits, analysis::take_calls_per_thread());
  EXPECT_EQ(*take->filtered, analysis::take_calls_per_thread() - analysis::calls_of(300));
  EXPECT_EQ(nap->hits, 3u);
  EXPECT_EQ(*nap->filtered, 0u);
  EXPECT_EQ(lines_of(parse_trace(filtered.out), "nap").size(), 3u);

  const RunResult plain = run_traced(probes, {analysis_path("O2")}, {"--profile"});
  ASSERT_EQ(plain.status, 0) << plain;
  const auto plain_take = filtered_row(plain.err, "take");
  ASSERT_TRUE(plain_take) << plain.err;
  EXPECT_FALSE(plain_take->filtered) << plain.err;
  EXPECT_EQ(plain_take->hits, analysis::take_calls_per_thread());
}

// $duration on a return event, as a fetch argument and in a filter: the
// program naps 10, 10 and 40 ms.
TEST(AnalysisFilter, DurationOfAReturnEvent) {
  const std::string probe = "r:a/nap analysis_O2:nap d=$duration:u64";
  const RunResult all = run_traced({probe}, {analysis_path("O2")});
  ASSERT_EQ(all.status, 0) << all;
  const auto naps = lines_of(parse_trace(all.out), "nap");
  ASSERT_EQ(naps.size(), 3u) << all;
  for (size_t i = 0; i < naps.size(); ++i) {
    const uint64_t ns = std::stoull(naps[i].arg("d"));
    EXPECT_GE(ns, analysis::kNaps[i] * 1000000ull) << naps[i];
    EXPECT_LT(ns, analysis::kNaps[i] * 1000000ull + 2000000000ull) << naps[i];
  }

  const RunResult longer = run_traced({probe}, {analysis_path("O2")},
                                      {"--filter", "a/nap:$duration > 30000000", "--profile"});
  ASSERT_EQ(longer.status, 0) << longer;
  const auto long_naps = lines_of(parse_trace(longer.out), "nap");
  ASSERT_EQ(long_naps.size(), 1u) << longer;
  EXPECT_GE(std::stoull(long_naps[0].arg("d")), 40000000ull) << long_naps[0];
  const auto row = filtered_row(longer.err, "nap");
  ASSERT_TRUE(row && row->filtered) << longer.err;
  EXPECT_EQ(row->hits, 3u);
  EXPECT_EQ(*row->filtered, 2u);

  const RunResult shorter =
      run_traced({probe}, {analysis_path("O2")},
                 {"--filter", "a/nap:$duration >= 10000000 && $duration < 30000000"});
  ASSERT_EQ(shorter.status, 0) << shorter;
  const auto short_naps = lines_of(parse_trace(shorter.out), "nap");
  ASSERT_EQ(short_naps.size(), 2u) << shorter;
  for (const TraceLine& line : short_naps) {
    EXPECT_LT(std::stoull(line.arg("d")), 30000000ull) << line;
  }
}

// $duration exists on return events only.
TEST(AnalysisFilter, DurationOnAnEntryEventIsNotAField) {
  const RunResult run = run_traced({"p:a/nap analysis_O2:nap"}, {analysis_path("O2")},
                                   {"--filter", "a/nap:$duration > 1"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("dprobe: error: Field not found (--filter)")) << run;
  EXPECT_FALSE(program_finished(run)) << run;
}

// syscall_calls known: openat("/dev/null", O_RDONLY | O_CLOEXEC) gives fd
// 3, openat of a missing path with O_RDONLY fails with -ENOENT.
std::vector<SyscallLine> openat_lines(const RunResult& run) {
  std::vector<SyscallLine> lines;
  for (const SyscallLine& line : parse_syscall_trace(run.out)) {
    if (line.name() == "openat") lines.push_back(line);
  }
  return lines;
}

TEST(AnalysisFilter, SyscallEnterEvent) {
  const std::string program_path = program("syscall_calls_O2");
  const RunResult rdonly =
      run_traced({"syscalls:sys_enter_openat"}, {program_path, "known"},
                 {"--filter", "syscalls/sys_enter_openat:flags == 0", "--profile"});
  ASSERT_EQ(rdonly.status, 0) << rdonly;
  auto lines = openat_lines(rdonly);
  ASSERT_EQ(lines.size(), 1u) << rdonly;
  EXPECT_THAT(lines[0].text, HasSubstr(", flags: 0, mode: 0)")) << lines[0].text;
  const auto row = filtered_row(rdonly.err, "sys_enter_openat");
  ASSERT_TRUE(row && row->filtered) << rdonly.err;
  EXPECT_EQ(row->hits, 2u);
  EXPECT_EQ(*row->filtered, 1u);

  const RunResult cloexec = run_traced({"syscalls:sys_enter_openat"}, {program_path, "known"},
                                       {"--filter", "sys_enter_openat:flags & 0x80000"});
  ASSERT_EQ(cloexec.status, 0) << cloexec;
  lines = openat_lines(cloexec);
  ASSERT_EQ(lines.size(), 1u) << cloexec;
  EXPECT_THAT(lines[0].text, HasSubstr(", flags: 0x80000, mode: 0)")) << lines[0].text;
}

// sys_exit_NAME's ret is the kernel's `long ret` (signed:1 in its format
// file): `ret < 0` keeps the failed calls and `ret == -2` is a valid
// filter, as the kernel's own sys_exit_openat/filter takes them.
TEST(AnalysisFilter, SyscallExitReturnIsSigned) {
  const std::string program_path = program("syscall_calls_O2");
  // The descriptor the program got (3, unless the test runner left one
  // more open): the one call that did not fail.
  const RunResult fd = run_traced({"syscalls:sys_exit_openat"}, {program_path, "known"},
                                  {"--filter", "syscalls/sys_exit_openat:ret >= 0"});
  ASSERT_EQ(fd.status, 0) << fd;
  auto lines = openat_lines(fd);
  ASSERT_EQ(lines.size(), 1u) << fd;
  const size_t at = fd.out.find(" fd ");
  ASSERT_NE(at, std::string::npos) << fd;
  const int number = std::stoi(fd.out.substr(at + 4));
  EXPECT_EQ(lines[0].result(), "0x" + std::to_string(number));
  EXPECT_LT(number, 10);

  const RunResult failed = run_traced({"syscalls:sys_exit_openat"}, {program_path, "known"},
                                      {"--filter", "syscalls/sys_exit_openat:ret < 0"});
  ASSERT_EQ(failed.status, 0) << failed;
  lines = openat_lines(failed);
  EXPECT_EQ(lines.size(), 1u) << "the call that failed with -ENOENT: " << failed;
  if (lines.size() == 1) EXPECT_EQ(lines[0].result(), "0xfffffffffffffffe");

  const RunResult enoent = run_traced({"syscalls:sys_exit_openat"}, {program_path, "known"},
                                      {"--filter", "syscalls/sys_exit_openat:ret == -2"});
  EXPECT_EQ(enoent.status, 0) << enoent;
  lines = openat_lines(enoent);
  EXPECT_EQ(lines.size(), 1u) << enoent;
  if (lines.size() == 1) EXPECT_EQ(lines[0].result(), "0xfffffffffffffffe");
}

// ---- Bad filters -----------------------------------------------------------------------

struct BadFilter {
  std::string filter;   // after "a/take:"
  std::string message;  // the kernel's
  size_t column;        // in `filter`, where the kernel's error_log puts its caret
};

// Each checked against Linux 6.18's error_log (the same filters written
// to events/GRP/EVENT/filter of a uprobe with the same fields).
const BadFilter kBadFilters[] = {
    {"sise > 3", "Field not found", 5},
    {"size > 3 && common_pd == 3", "Field not found", 22},
    {"tag > 3", "Expecting string field", 7},
    {"tag == 3", "Expecting string field", 8},
    {"size > 3 || comm == 5", "Expecting string field", 21},
    {"size == \"x\"", "Expecting numeric field", 9},
    {"size ~ \"1*\"", "Expecting numeric field", 8},
    {"(size > 3", "Too many '('", 0},
    {"size > 3 && (tag == \"a\"", "Too many '('", 12},
    {"size > 3)", "Too few '('", 8},
    {"s == -x", "Illegal integer value", 6},
    {"size = 3", "Invalid operator", 6},
    {"tag ~ alpha", "Invalid value (did you forget quotes)?", 7},
};

// A bad filter: exit status 2, the kernel's message, the option's text
// and a caret under the column, and the program never started.
TEST(AnalysisFilter, BadFiltersAreRefusedWithTheKernelsCaret) {
  for (const BadFilter& bad : kBadFilters) {
    SCOPED_TRACE(bad.filter);
    const std::string option = "a/take:" + bad.filter;
    const RunResult run =
        run_traced({take_probe_signed()}, {analysis_path("O2")}, {"--filter", option, "--profile"});
    EXPECT_EQ(run.status, 2) << run;
    const std::string expected = "dprobe: error: " + bad.message +
                                 " (--filter)\n  Command: " + option + "\n" +
                                 std::string(11 + 7 + bad.column, ' ') + "^\n";
    EXPECT_THAT(run.err, HasSubstr(expected)) << run;
    EXPECT_FALSE(program_finished(run)) << "the program ran: " << run;
    EXPECT_EQ(run.out, "") << run;
  }
}

// A filter, trigger or stack trace for an event that is not defined: exit
// status 2, the option named, nothing run.
TEST(AnalysisFilter, OptionsForAnEventThatDoesNotExist) {
  const std::vector<std::vector<std::string>> options = {
      {"--filter", "a/nope:size > 3"}, {"--filter", "nope:size > 3"},
      {"--filter", "b/take:size > 3"}, {"--trigger", "a/nope:hist:keys=size"},
      {"--stacktrace", "a/nope"},
  };
  for (const std::vector<std::string>& option : options) {
    SCOPED_TRACE(option[0] + " " + option[1]);
    const RunResult run = run_traced({take_probe()}, {analysis_path("O2")}, option);
    EXPECT_EQ(run.status, 2) << run;
    EXPECT_THAT(run.err,
                HasSubstr("dprobe: error: " + option[0] + " " + option[1] + ": no such event\n"))
        << run;
    EXPECT_FALSE(program_finished(run)) << "the program ran: " << run;
  }
}

// A bad filter among good ones still arms nothing: every option is
// checked before anything runs, each error reported.
TEST(AnalysisFilter, OneBadFilterAmongGoodOnesArmsNothing) {
  const RunResult run = run_traced(
      {take_probe(), "p:a/nap analysis_O2:nap ms=%di:s64"}, {analysis_path("O2")},
      {"--filter", "a/nap:ms > 5", "--filter", "a/take:size >", "--filter", "a/nap:mss > 1"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("  Command: a/take:size >\n")) << run;
  EXPECT_THAT(run.err, HasSubstr("dprobe: error: Field not found (--filter)\n"
                                 "  Command: a/nap:mss > 1\n"))
      << run;
  EXPECT_FALSE(program_finished(run)) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("nap:"))) << run;
}

}  // namespace
}  // namespace dprobe::integration
