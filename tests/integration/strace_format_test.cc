// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// --format strace against the machine's strace on the same program: the
// lines of every call the program makes once the agent runs (the dynamic
// loader's before it are not events) must be strace's, once what the two
// cannot share is taken out: addresses, the structs strace reads at the
// return (dprobe prints their addresses), the column padding. The data
// read and write carry must be strace's, quoted and cut as strace does. Then a recording of
// --format strace printed by report --format strace, and a failed call's errno.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

const std::string kStrace = "/usr/bin/strace";
const std::string kFile = "/etc/os-release";
// cat writes to /dev/null in both runs: its copy loop depends on where
// its output goes (copy_file_range to a file, read and write here).
const std::vector<std::string> kCommand = {"/usr/bin/cat", kFile};

std::vector<std::string> lines_in(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A line as both tools print it, or "" for a line only strace prints
// (+++ exited: strace says it whether or not exit_group is traced).
std::string comparable(std::string line) {
  if (line.starts_with("+++") || line.starts_with("---")) return {};
  static const std::regex kStruct(R"(\{[^{}]*\})");
  static const std::regex kAddress("0x[0-9a-f]+");
  static const std::regex kPadding(" +=");
  for (std::string before; before != line;) {
    before = line;
    line = std::regex_replace(line, kStruct, "ADDR");
  }
  line = std::regex_replace(line, kAddress, "ADDR");
  return std::regex_replace(line, kPadding, " =");
}

std::vector<std::string> comparable_lines(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& line : lines_in(text)) {
    if (std::string kept = comparable(line); !kept.empty()) out.push_back(kept);
  }
  return out;
}

RunResult run_quiet(std::vector<std::string> args) {
  return run_spawned(with_probe_engine(std::move(args)), run_time_limit(), "/dev/null");
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// Whether `text` has cat's open of kFile and the close of that descriptor,
// in strace's column (the descriptor is the lowest free one: 3, or more
// where the test runner left some open).
bool opens_and_closes_the_file(const std::string& text) {
  std::smatch opened;
  const std::regex open_line("openat\\(AT_FDCWD, \"" + kFile + "\", O_RDONLY\\) = ([0-9]+)\n");
  if (!std::regex_search(text, opened, open_line)) return false;
  const std::string close_call = "close(" + opened[1].str() + ")";
  const std::string padded = close_call + std::string(40 - close_call.size(), ' ') + "= 0\n";
  return text.find(padded) != std::string::npos;
}

TEST(StraceFormat, TheProgramsOwnCallsAreStracesLines) {
  if (::access(kStrace.c_str(), X_OK) != 0) GTEST_SKIP() << "needs " << kStrace;
  TempDir dir;
  const std::string strace_out = dir.file("strace.txt");
  const std::string dprobe_out = dir.file("dprobe.txt");
  const std::string calls = "%file,read,write,close";
  std::vector<std::string> strace_args = {kStrace, "-o", strace_out, "-e", "trace=" + calls};
  strace_args.insert(strace_args.end(), kCommand.begin(), kCommand.end());
  const RunResult oracle = run_spawned(strace_args, run_time_limit(), "/dev/null");
  if (oracle.status != 0) GTEST_SKIP() << "strace cannot trace here: " << oracle.err;
  std::vector<std::string> args = {DPROBE_BINARY, "run", "--format", "strace", "--syscalls",
                                   calls,         "-o",  dprobe_out, "--"};
  args.insert(args.end(), kCommand.begin(), kCommand.end());
  const RunResult run = run_quiet(args);
  ASSERT_EQ(run.status, 0) << run;

  const std::vector<std::string> expected = comparable_lines(read_file(strace_out));
  const std::vector<std::string> traced = comparable_lines(read_file(dprobe_out));
  // The agent starts after the dynamic loader: the trace is the tail of
  // strace's, from the first call the program makes with the agent there.
  ASSERT_GE(traced.size(), 10u) << joined(traced);
  ASSERT_LE(traced.size(), expected.size()) << joined(traced);
  const std::vector<std::string> tail(expected.end() - static_cast<ptrdiff_t>(traced.size()),
                                      expected.end());
  EXPECT_EQ(joined(traced), joined(tail));
  const std::string text = read_file(dprobe_out);
  EXPECT_TRUE(opens_and_closes_the_file(text)) << text;
}

TEST(StraceFormat, AFailedCallPrintsItsErrno) {
  const RunResult run = run_quiet({DPROBE_BINARY, "run", "--format", "strace", "--syscalls",
                                   "openat", "--syscall-times", "--timestamps", "tt", "-o",
                                   "/dev/stderr", "--", "/usr/bin/cat", "/nonexistent/file"});
  EXPECT_EQ(run.status, 1) << run;  // cat's own status
  const std::regex line(
      R"(\d\d:\d\d:\d\d\.\d{6} openat\(AT_FDCWD, "/nonexistent/file", O_RDONLY\) = -1 ENOENT \(No such file or directory\) <\d+\.\d{6}>\n)");
  EXPECT_TRUE(std::regex_search(run.err, line)) << run.err;
}

TEST(StraceFormat, ARecordingReportsAsTheRunPrints) {
  TempDir dir;
  const std::string recording = dir.file("trace.dat");
  const RunResult record =
      run_quiet({DPROBE_BINARY, "record", "--format", "strace", "--syscalls", "openat,close", "-o",
                 recording, "--", "/usr/bin/cat", kFile});
  ASSERT_EQ(record.status, 0) << record;
  const RunResult report =
      run_spawned({DPROBE_BINARY, "report", "--format", "strace", recording}, run_time_limit());
  ASSERT_EQ(report.status, 0) << report;
  EXPECT_TRUE(opens_and_closes_the_file(report.out)) << report.out;
  const RunResult plain = run_spawned({DPROBE_BINARY, "report", recording}, run_time_limit());
  EXPECT_TRUE(std::regex_search(plain.out, std::regex("sys_openat -> 0x[0-9a-f]+\n"))) << plain.out;
}

TEST(StraceFormat, TakesNoDefinitionsOfItsOwn) {
  const RunResult run = run_quiet({DPROBE_BINARY, "run", "--format", "strace", "-e",
                                   "syscalls:sys_enter_openat", "--", "/bin/true"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_NE(run.err.find("--format strace makes its own events"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace dprobe::integration
