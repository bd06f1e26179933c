// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's descriptors and environment stay out of the program's way
// (tests/programs/fd_reuse.c, fd_environ.c): a program that closes every
// descriptor number (close_range, a loop to its limit, dup2 over them all)
// and opens its own files there keeps exactly its bytes in them and its
// descriptors open, and its trace goes on after the close; a program that
// cleared its environment finds no trace of the agent in
// /proc/self/environ.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kProbe = "p:g/fdp fd_probe i=%di:s64";
constexpr int kFiles = 8;

// "" when every file holds only its own lines ("K I", K = I % 8), with I
// rising; else what is wrong.
std::string foreign_bytes(const TempDir& dir) {
  std::ostringstream wrong;
  for (int k = 0; k < kFiles; ++k) {
    const std::string path = dir.file("file." + std::to_string(k));
    std::istringstream lines(read_file(path));
    std::string line;
    long last = -1;
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      long file = -1;
      long i = -1;
      std::string rest;
      if (!(fields >> file >> i) || (fields >> rest) || file != k || i % kFiles != k || i <= last) {
        wrong << path << ": line \"" << line << "\" is not the program's; ";
        break;
      }
      last = i;
    }
    if (last < 0) wrong << path << ": empty; ";
  }
  return wrong.str();
}

// The i of every hit in the trace.
std::vector<long> hit_values(const std::string& trace) {
  std::vector<long> values;
  for (const TraceLine& line : parse_trace(trace)) {
    if (line.event == "fdp") values.push_back(std::stol(line.arg("i"), nullptr, 0));
  }
  return values;
}

long count_from(const std::vector<long>& values, long first) {
  long count = 0;
  for (long value : values) count += value >= first ? 1 : 0;
  return count;
}

void expect_program_unharmed(const RunResult& run, const TempDir& dir, const std::string& trace) {
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("fd_reuse: open 8")) << "its descriptors were closed: " << run;
  EXPECT_THAT(run.out, Not(HasSubstr("failed"))) << run;
  EXPECT_EQ(foreign_bytes(dir), "");
  const auto ready = static_cast<long>(last_number_after(run.out, "fd_reuse: ready ").value_or(0));
  const auto calls = static_cast<long>(last_number_after(run.out, "fd_reuse: calls ").value_or(0));
  ASSERT_GT(ready, 0) << run;
  ASSERT_GT(calls, ready + 50) << run;
  // Every call after the close is in the trace, as the ones before are.
  EXPECT_EQ(count_from(hit_values(trace), ready), calls - ready) << run;
  EXPECT_EQ(count_from(hit_values(trace), 0), calls) << run;
}

class Descriptors : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

// Under `dprobe run`, probes hitting before and after the program clears
// every number; optionally with a soft limit of 1024 (the usual one), so
// that a loop to 1024 reaches the numbers just under the limit.
TEST_P(Descriptors, ProgramThatClearsEveryNumberKeepsItsFilesAndItsTrace) {
  const auto& [mode, low_limit] = GetParam();
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::vector<std::string> command;
  if (low_limit) {
    const std::string prlimit = find_tool("prlimit");
    if (prlimit.empty()) GTEST_SKIP() << "needs prlimit";
    command = {prlimit, "--nofile=1024:4096"};
  }
  for (const std::string& arg : {std::string(DPROBE_BINARY), std::string("run"), std::string("-e"),
                                 kProbe, std::string("-o"), dir.file("trace"), std::string("--"),
                                 program("fd_reuse_O2"), mode, dir.path(), std::string("0.5")}) {
    command.push_back(arg);
  }
  const RunResult run = run_program(command);
  expect_program_unharmed(run, dir, read_file(dir.file("trace")));
}

INSTANTIATE_TEST_SUITE_P(Modes, Descriptors,
                         ::testing::Combine(::testing::Values("close_range", "loop", "dup2"),
                                            ::testing::Bool()));

// Attached, then the program clears every number and opens its files
// again while the probe hits; the detach writes the text back: not into
// the program's files, and the trace has the hits after the reopen.
TEST(DescriptorsAttach, ClearedNumbersAfterAttachKeepFilesTraceAndTextRestore) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess target({program("fd_reuse_O2"), "close_range", dir.path(), "6"},
                     dir.file("target.out"), dir.file("target.err"));
  ASSERT_TRUE(target.wait_for_output("fd_reuse: ready", patience(2))) << target.err();
  const auto probe = symbol_address(target.pid(), "fd_probe");
  if (!probe) GTEST_SKIP() << "needs nm for fd_probe's address";
  const std::string exe = executable_path(target.pid());
  LiveProcess attach({DPROBE_BINARY, "attach", "-p", std::to_string(target.pid()), "-e", kProbe,
                      "--duration", "2", "-o", dir.file("trace")},
                     dir.file("attach.out"), dir.file("attach.err"));
  ASSERT_TRUE(eventually([&] { return armed_byte(first_byte(target.pid(), *probe)); }, patience(2)))
      << attach.err();
  target.signal(SIGUSR1);
  ASSERT_TRUE(target.wait_for_output("fd_reuse: reopened", patience())) << target.out();
  EXPECT_EQ(attach.wait(patience(3)), 0) << attach.err();
  EXPECT_EQ(text_differences_from_file(target.pid(), exe), "");
  ASSERT_EQ(target.wait(patience(3)), 0) << target.err();
  const std::string out = target.out();
  EXPECT_THAT(out, HasSubstr("fd_reuse: open 8")) << out;
  EXPECT_EQ(foreign_bytes(dir), "");
  const auto reopened =
      static_cast<long>(last_number_after(out, "fd_reuse: reopened ").value_or(0));
  EXPECT_GT(count_from(hit_values(read_file(dir.file("trace"))), reopened + 1), 50)
      << "the trace stopped at the close: " << attach.err();
}

// clearenv() and a look at /proc/self/environ: the agent's LD_PRELOAD and
// DPROBE_ entries are gone from the block the kernel shows, the rest is
// there.
TEST(Environment, ClearedEnvironmentShowsNoAgent) {
  ::setenv("FD_ENVIRON_MARK", "kept", 1);
  const RunResult run = run_traced({kProbe}, {program("fd_environ_O0")});
  ::unsetenv("FD_ENVIRON_MARK");
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("fd_environ: done")) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("fd_environ: entry"))) << run;
  EXPECT_THAT(run.out, HasSubstr("fd_environ: mark kept")) << run;
  EXPECT_EQ(hit_values(run.out).size(), 2u) << run;
}

// env -i, then a program that reads /proc/self/environ: the kernel's block
// holds the program's environment exactly, as untraced: no trace of the
// agent's variables, no blank where they were, the user's own LD_PRELOAD in
// its place.
TEST(Environment, ProcEnvironHoldsExactlyWhatTheProgramWasGiven) {
  for (const std::vector<std::string>& given :
       {std::vector<std::string>{}, std::vector<std::string>{"A=1", "B=two"},
        std::vector<std::string>{"A=1", "LD_PRELOAD=libm.so.6", "B=two"}}) {
    std::vector<std::string> command{"/usr/bin/env", "-i"};
    command.insert(command.end(), given.begin(), given.end());
    command.insert(command.end(), {"/bin/cat", "/proc/self/environ"});
    std::string expected;
    for (const std::string& entry : given) expected += entry + '\0';
    const RunResult untraced = run_program(command);
    ASSERT_EQ(untraced.out, expected) << untraced;
    TempDir dir;
    const RunResult traced =
        run_traced({"p:env/r libc.so.6:read"}, command, {"-o", dir.file("trace")});
    EXPECT_EQ(traced.status, 0) << traced;
    EXPECT_EQ(traced.out, expected) << traced;
    EXPECT_THAT(read_file(dir.file("trace")), HasSubstr("cat-")) << "cat was traced";
  }
}

}  // namespace
}  // namespace dprobe::integration
