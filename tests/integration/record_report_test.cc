// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe record` and `dprobe report`: the report of a recording is the
// text (and the JSON lines) `run` prints for the same run of
// tests/programs/ret_basic.c, byte for byte but for what changes from run
// to run (the time, the cpu, the thread's number; addresses are kept the
// same by running without ASLR); the profile is kept; a file cut short,
// corrupt or foreign is an error naming the offset, with every record
// before it still reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::vector<std::string> kDefinitions = {
    "-e", "p:rb/bump bump ra=+0(%sp):symbol",
    "-e", "r:rb/bump_ret bump rv=$retval:s64 c=@ret_counter:s64",
    "-e", "r:rb/str ret_str s=+0($retval):string c=+0($retval):char",
    "-e", "r:rb/ptr ret_ptr id=+0($retval):s32 name=+0(+16($retval)):string",
    "-e", "p:rb/ptr_in ret_ptr"};

std::string exe() { return program("ret_basic_O0"); }

// `dprobe SUBCOMMAND OPTIONS DEFINITIONS -- ret_basic`, without ASLR.
RunResult traced(const std::string& subcommand, const std::vector<std::string>& options) {
  std::vector<std::string> args{"/usr/bin/setarch", "-R", DPROBE_BINARY, subcommand};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), kDefinitions.begin(), kDefinitions.end());
  args.push_back("--");
  args.push_back(exe());
  return run_program(args);
}

// The text without the thread number, the cpu and the time of each line.
std::string text_without_times(const std::string& text) {
  static const std::regex kLineHead(R"(-\d+ +\[\d+\] (\S+) +\d+\.\d+:)");
  return std::regex_replace(text, kLineHead, "-TID [CPU] $1 TS:");
}

std::string json_without_times(const std::string& text) {
  static const std::regex kFields(R"re("(ts|pid|tid|cpu)":[0-9.]+)re");
  return std::regex_replace(text, kFields, "\"$1\":N");
}

class RecordReport : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }
  std::string recorded(const std::vector<std::string>& options = {}) {
    const std::string file = dir_.file("trace.dat");
    std::vector<std::string> all{"-o", file};
    all.insert(all.end(), options.begin(), options.end());
    const RunResult record = traced("record", all);
    EXPECT_EQ(record.status, 0) << record;
    EXPECT_THAT(record.out, HasSubstr("ret_basic: ok\n")) << record;
    return file;
  }
  TempDir dir_;
};

TEST_F(RecordReport, TextIsWhatRunPrints) {
  const RunResult run = traced("run", {"-o", dir_.file("run.txt")});
  ASSERT_EQ(run.status, 0) << run;
  const std::string expected = read_file(dir_.file("run.txt"));
  ASSERT_THAT(expected, HasSubstr("bump_ret:"));
  const RunResult report = run_dprobe({"report", recorded()});
  ASSERT_EQ(report.status, 0) << report;
  EXPECT_EQ(report.err, "");
  EXPECT_EQ(text_without_times(report.out), text_without_times(expected));
  EXPECT_THAT(report.out, HasSubstr("ra=main+0x"));  // a symbol value, from the file
}

TEST_F(RecordReport, JsonIsWhatRunPrints) {
  const RunResult run = traced("run", {"--json", "-o", dir_.file("run.json")});
  ASSERT_EQ(run.status, 0) << run;
  const RunResult report = run_dprobe({"report", "--json", recorded()});
  ASSERT_EQ(report.status, 0) << report;
  EXPECT_EQ(json_without_times(report.out), json_without_times(read_file(dir_.file("run.json"))));
}

TEST_F(RecordReport, ProfileIsKept) {
  const std::string file = recorded({"--profile"});
  const RunResult report = run_dprobe({"report", "--profile", file});
  ASSERT_EQ(report.status, 0) << report;
  const std::vector<ProfileRow> rows = parse_profile(report.out);
  ASSERT_EQ(rows.size(), 5u) << report;
  EXPECT_EQ(rows[0].event, "bump");
  EXPECT_EQ(rows[0].hits, 3u);
}

TEST_F(RecordReport, TruncatedFileReportsItsPrefix) {
  const std::string file = recorded();
  const std::string whole = read_file(file);
  const RunResult full = run_dprobe({"report", file});
  ASSERT_EQ(full.status, 0) << full;
  // The profile, last, cut short: every record is there.
  write_file(file, whole.substr(0, whole.size() - 20));
  RunResult cut = run_dprobe({"report", file});
  EXPECT_EQ(cut.status, 1) << cut;
  EXPECT_THAT(cut.err, HasSubstr("at offset "));
  EXPECT_THAT(cut.err, HasSubstr(": truncated chunk"));
  EXPECT_EQ(cut.out, full.out);
  // Cut in the middle: the records before the cut, whole lines.
  write_file(file, whole.substr(0, whole.size() / 2));
  cut = run_dprobe({"report", file});
  EXPECT_EQ(cut.status, 1) << cut;
  EXPECT_THAT(cut.err, HasSubstr(": truncated chunk"));
  ASSERT_FALSE(cut.out.empty());
  EXPECT_LT(cut.out.size(), full.out.size());
  EXPECT_THAT(full.out, StartsWith(cut.out));
  EXPECT_EQ(cut.out.back(), '\n');
}

TEST_F(RecordReport, CorruptChunkIsNamedByOffset) {
  const std::string file = recorded();
  std::string data = read_file(file);
  data[16] = '\x7f';  // the first chunk's kind
  write_file(file, data);
  const RunResult report = run_dprobe({"report", file});
  EXPECT_EQ(report.status, 1) << report;
  EXPECT_THAT(report.err, HasSubstr("at offset 16: unknown chunk kind"));
  EXPECT_EQ(report.out, "");
}

TEST_F(RecordReport, ForeignAndNewerFilesAreRefused) {
  const std::string file = dir_.file("foreign");
  write_file(file, "# tracer: nop\nnot a trace file at all\n");
  RunResult report = run_dprobe({"report", file});
  EXPECT_EQ(report.status, 1) << report;
  EXPECT_THAT(report.err, HasSubstr("at offset 0: not a dprobe trace file"));
  write_file(file, std::string("DPROBETF\x05\0\0\0\0\0\0\0", 16));
  report = run_dprobe({"report", file});
  EXPECT_EQ(report.status, 1) << report;
  EXPECT_THAT(report.err, HasSubstr("trace file version 5; this dprobe reads versions 1 to 4"));
  report = run_dprobe({"report", dir_.file("missing.dat")});
  EXPECT_EQ(report.status, 1) << report;
  EXPECT_THAT(report.err, HasSubstr("No such file"));
}

TEST_F(RecordReport, UnwritableOutputStopsBeforeTheProgram) {
  const RunResult full = traced("record", {"-o", "/dev/full"});
  EXPECT_EQ(full.status, 1) << full;
  EXPECT_THAT(full.err, HasSubstr("/dev/full: No space left on device"));
  EXPECT_THAT(full.out, Not(HasSubstr("ret_basic")));
  const RunResult both = run_dprobe({"record", "-p", "1", "--", "true"});
  EXPECT_EQ(both.status, 2) << both;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// The time of each trace line, as printed ("12.345678").
std::vector<std::string> times_of(const std::string& text) {
  static const std::regex kTime(R"( (\d+\.\d{6}): )");
  std::vector<std::string> times;
  for (std::sregex_iterator it(text.begin(), text.end(), kTime), end; it != end; ++it) {
    times.push_back((*it)[1]);
  }
  return times;
}

// Checks a Perfetto file against the trace-event format: prints
// "slices=N instants=N" or exits 1 saying what is wrong.
constexpr const char* kCheckPerfetto = R"(
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
named = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
threads = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
slices = [e for e in events if e["ph"] == "X"]
instants = [e for e in events if e["ph"] == "i"]
for e in slices + instants:
    assert e["name"] and e["pid"] in named and e["tid"] in threads, e
for e in slices:
    assert e["dur"] >= 0, e
    entry = e["args"].get("entry", e["args"]["return"])  # a return probe alone has none
    assert entry["tid"] == e["args"]["return"]["tid"] == e["tid"], e
by_tid = {}
depth = 0
for e in sorted(slices, key=lambda e: (e["ts"], -e["dur"])):
    stack = by_tid.setdefault(e["tid"], [])
    while stack and stack[-1] <= e["ts"]:
        stack.pop()
    assert not stack or e["ts"] + e["dur"] <= stack[-1], ("not nested", e)
    stack.append(e["ts"] + e["dur"])
    depth = max(depth, len(stack))
print("slices=%d instants=%d depth=%d" % (len(slices), len(instants), depth))
)";

// kCheckPerfetto run on `json`.
RunResult check_perfetto(const std::string& json) {
  return run_program({"/usr/bin/python3", "-c", kCheckPerfetto, json});
}

// rec at entry and return, and, with leaf, every call of ret_recursion.
const std::vector<std::string> kRecEvents = {"-e", "p:rr/rec rec n=%di:s64", "-e",
                                             "r:rr/rec_ret rec rv=$retval:s64"};
const std::vector<std::string> kRecursionEvents = {"-e", "p:rr/rec rec n=%di:s64",
                                                   "-e", "r:rr/rec_ret rec rv=$retval:s64",
                                                   "-e", "p:rr/leaf leaf i=%di:s64"};

// `dprobe SUBCOMMAND OPTIONS DEFINITIONS -- ret_recursion DEPTH TIMES`.
RunResult trace_recursion(const std::string& subcommand, const std::vector<std::string>& options,
                          const std::vector<std::string>& definitions, const char* depth,
                          const char* times) {
  std::vector<std::string> args{subcommand};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), definitions.begin(), definitions.end());
  args.insert(args.end(), {"--", program("ret_recursion_O0"), depth, times});
  return run_dprobe(args);
}

TEST_F(RecordReport, PerfettoNestsReturnsAsSlices) {
  const std::string file = dir_.file("rec.dat");
  const RunResult record = trace_recursion("record", {"-o", file}, kRecursionEvents, "5", "2");
  ASSERT_EQ(record.status, 0) << record;
  const std::string json = dir_.file("trace.json");
  const RunResult report = run_dprobe({"report", "--perfetto", json, file});
  ASSERT_EQ(report.status, 0) << report;
  EXPECT_EQ(report.out, "");
  const RunResult check = check_perfetto(json);
  ASSERT_EQ(check.status, 0) << check << read_file(json).substr(0, 2000);
  // rec(5) twice: 6 calls each, every one a slice; each leaf an instant.
  EXPECT_THAT(check.out, StartsWith("slices=12 instants="));
  EXPECT_THAT(check.out, HasSubstr(" depth=6\n"));  // rec(5) down to rec(0)
  EXPECT_THAT(read_file(json), HasSubstr("\"ph\":\"M\""));
}

// Return probes alone: each record carries its call's entry time, so each
// call is a slice all the same, nested as the recursion was.
TEST_F(RecordReport, PerfettoTimesReturnProbesWithoutEntryProbes) {
  const std::string file = dir_.file("rec.dat");
  const RunResult record =
      trace_recursion("record", {"-o", file}, {"-e", "r:rr/rec_ret rec rv=$retval:s64"}, "5", "2");
  ASSERT_EQ(record.status, 0) << record;
  const std::string json = dir_.file("trace.json");
  const RunResult report = run_dprobe({"report", "--perfetto", json, file});
  ASSERT_EQ(report.status, 0) << report;
  const RunResult check = check_perfetto(json);
  ASSERT_EQ(check.status, 0) << check << read_file(json).substr(0, 2000);
  EXPECT_EQ(check.out, "slices=12 instants=0 depth=6\n");
  // The text is the kernel's all the same: no entry time in it.
  const RunResult text = run_dprobe({"report", file});
  EXPECT_EQ(count_of(text.out, " rec_ret: (main+0x"), 2u) << text;
  EXPECT_EQ(count_of(text.out, " rec_ret: (rec+0x"), 10u) << text;
  // run --perfetto asks for the entry times as record does.
  const std::string run_json = dir_.file("run.json");
  const RunResult run = trace_recursion("run", {"--perfetto", run_json},
                                        {"-e", "r:rr/rec_ret rec rv=$retval:s64"}, "5", "2");
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_EQ(check_perfetto(run_json).out, "slices=12 instants=0 depth=6\n");
}

// What the session said at its end (events lost here: rings of 4 KiB for
// four threads calling without pause) is in the file, and the report
// says it again.
TEST_F(RecordReport, TheSessionsClosingWordsAreKept) {
  const std::string file = dir_.file("lost.dat");
  const RunResult record =
      run_dprobe({"record", "-o", file, "--buffer-size", "4K", "-e", "p:t/work work", "--",
                  program("threads_O2"), "4", "200000"});
  ASSERT_EQ(record.status, 0) << record;
  const size_t at = record.err.find("events lost");
  ASSERT_NE(at, std::string::npos) << record;
  const std::string lost_line = record.err.substr(record.err.rfind("dprobe: ", at));
  const RunResult report = run_dprobe({"report", file});
  ASSERT_EQ(report.status, 0) << report;
  EXPECT_THAT(report.err, HasSubstr(lost_line.substr(0, lost_line.find('\n') + 1))) << report;
}

TEST_F(RecordReport, RunWritesPerfettoToo) {
  const std::string json = dir_.file("run.json");
  const RunResult run = trace_recursion("run", {"--perfetto", json}, kRecEvents, "5", "2");
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_EQ(count_of(run.out, " rec_ret: "), 12u) << run;  // the text as ever
  const RunResult check = check_perfetto(json);
  ASSERT_EQ(check.status, 0) << check << read_file(json).substr(0, 2000);
  EXPECT_EQ(check.out, "slices=12 instants=0 depth=6\n");
  // record writes it beside its own file (each gets every event's format).
  const std::string recorded_json = dir_.file("record.json");
  const RunResult record = trace_recursion(
      "record", {"-o", dir_.file("rec.dat"), "--perfetto", recorded_json}, kRecEvents, "5", "2");
  ASSERT_EQ(record.status, 0) << record;
  const RunResult recorded = check_perfetto(recorded_json);
  EXPECT_EQ(recorded.out, "slices=12 instants=0 depth=6\n") << recorded;
  const RunResult full = run_dprobe({"run", "--perfetto", "/dev/full", "-e", "p:rr/rec rec", "--",
                                     program("ret_recursion_O0"), "1", "1"});
  EXPECT_EQ(full.status, 0) << "the program's own status: " << full;
  EXPECT_THAT(full.err, HasSubstr("/dev/full: No space left on device"));
}

// Many threads, each its own ring: every record is in the report, in time
// order, under its thread's name at the hit (a renamed thread too).
TEST_F(RecordReport, ThreadsAndTheirNamesAreKept) {
  const std::string file = dir_.file("threads.dat");
  RunResult record = run_dprobe({"record", "-o", file, "-e", "p:load/work work i=%si:u64 c=$comm",
                                 "--", program("threads_O0"), "4", "50"});
  ASSERT_EQ(record.status, 0) << record;
  RunResult report = run_dprobe({"report", file});
  ASSERT_EQ(report.status, 0) << report;
  std::vector<TraceLine> lines = parse_trace(report.out);
  ASSERT_EQ(lines.size(), 200u) << report;
  std::set<uint64_t> tids;
  for (const TraceLine& line : lines) tids.insert(line.tid);
  EXPECT_EQ(tids.size(), 4u);
  std::vector<std::string> times = times_of(report.out);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end(), [](const auto& a, const auto& b) {
    return std::stod(a) < std::stod(b);
  }));

  record = run_dprobe({"record", "-o", file, "-e", "p:load/work work i=%si:u64 c=$comm", "--",
                       program("threads_O0"), "1", "1", "rename"});
  ASSERT_EQ(record.status, 0) << record;
  report = run_dprobe({"report", file});
  lines = parse_trace(report.out);
  ASSERT_EQ(lines.size(), 2u) << report;
  EXPECT_EQ(lines[0].comm, "threads_O0");
  EXPECT_EQ(lines[1].comm, "renamed") << lines[1];
  EXPECT_EQ(lines[1].arg("c"), "\"renamed\"") << lines[1];
}

TEST_F(RecordReport, FiltersKeepTheRecordsTheyName) {
  const std::string file = dir_.file("rec.dat");
  const RunResult record = trace_recursion("record", {"-o", file}, kRecursionEvents, "3", "3");
  ASSERT_EQ(record.status, 0) << record;
  const RunResult all = run_dprobe({"report", file});
  ASSERT_EQ(all.status, 0) << all;
  EXPECT_EQ(count_of(all.out, " rec: "), 12u) << all.out;
  EXPECT_EQ(count_of(all.out, " leaf: "), 3u) << all.out;
  RunResult some = run_dprobe({"report", "--event", "rr/leaf", "--event", "rec_ret", file});
  EXPECT_EQ(count_of(some.out, "\n"), 15u) << some.out;
  EXPECT_EQ(count_of(some.out, " rec: "), 0u) << some.out;
  // The pid of the trace is in every line ("comm-PID"); no other pid is.
  const std::string pid = std::regex_replace(all.out.substr(0, all.out.find(' ', 20)),
                                             std::regex(R"(^.*-(\d+)$)"), "$1");
  some = run_dprobe({"report", "--pid", pid, "--tid", pid, file});
  EXPECT_EQ(some.out, all.out) << pid;
  some = run_dprobe({"report", "--pid", "1", file});
  EXPECT_EQ(some.status, 0) << some;
  EXPECT_EQ(some.out, "");
  const std::vector<std::string> times = times_of(all.out);
  ASSERT_EQ(times.size(), 27u);
  some = run_dprobe({"report", "--since", times[5], "--until", times[20], file});
  const std::vector<std::string> kept = times_of(some.out);
  ASSERT_FALSE(kept.empty()) << some;
  EXPECT_GE(std::stod(kept.front()), std::stod(times[5]));
  EXPECT_LE(std::stod(kept.back()), std::stod(times[20]));
  EXPECT_LT(kept.size(), times.size());
}

}  // namespace
}  // namespace dprobe::integration
