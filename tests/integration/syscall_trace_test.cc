// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// System call events as the kernel names and prints them
// (tests/programs/syscall_calls.c): the exact lines of known calls and
// their results, event probes that copy a path at the call, globs over
// syscalls and raw_syscalls, the errors of a name or a field that does not
// exist (the program never runs), and --summary's counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"
#include "integration/syscall_lines.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kCalls = program("syscall_calls_O2");

// What `syscall_calls known` says it did.
struct KnownCalls {
  long pid = 0;
  long ppid = 0;
  long fd = -1;
  std::string null_path;     // the address of "/dev/null", as %p prints it
  std::string missing_path;  // the address of the missing path
};

std::optional<KnownCalls> known_calls_of(const std::string& out) {
  const size_t at = out.find("syscall_calls: pid ");
  if (at == std::string::npos) return std::nullopt;
  KnownCalls known;
  char null_path[32] = {0};
  char missing_path[32] = {0};
  if (std::sscanf(out.c_str() + at, "syscall_calls: pid %ld ppid %ld fd %ld null %31s missing %31s",
                  &known.pid, &known.ppid, &known.fd, null_path, missing_path) != 5) {
    return std::nullopt;
  }
  known.null_path = null_path;
  known.missing_path = missing_path;
  return known;
}

// The caret line of an error: under column `column` of the definition.
std::string caret_at(size_t column) { return std::string(11 + column, ' ') + "^\n"; }

// ---- The kernel's lines --------------------------------------------------------

TEST(SyscallLines, KnownCallsPrintTheKernelsLines) {
  const RunResult run = run_traced({"syscalls:sys_enter_openat", "syscalls:sys_exit_openat",
                                    "syscalls:sys_*_getppid", "syscalls:sys_*_sched_yield"},
                                   {kCalls, "known"});
  ASSERT_EQ(run.status, 0) << run;
  const auto known = known_calls_of(run.out);
  ASSERT_TRUE(known) << run;
  const std::string ppid = exit_value(known->ppid);
  const auto lines = parse_syscall_trace(run.out);
  EXPECT_THAT(texts_of(lines),
              ElementsAre("sys_getppid()", "sys_getppid -> " + ppid,
                          "sys_openat(dfd: 0xffffff9c, filename: " + known->null_path +
                              ", flags: 0x80000, mode: 0)",
                          "sys_openat -> " + exit_value(known->fd),
                          "sys_openat(dfd: 0xffffff9c, filename: " + known->missing_path +
                              ", flags: 0, mode: 0)",
                          "sys_openat -> 0xfffffffffffffffe",             // -ENOENT
                          "sys_sched_yield()", "sys_sched_yield -> 0x0",  // no arguments
                          "sys_getppid()", "sys_getppid -> " + ppid))
      << run;
  for (const SyscallLine& line : lines) {
    EXPECT_EQ(line.tid, static_cast<uint64_t>(known->pid)) << line;
    EXPECT_EQ(line.comm, "syscall_calls_O") << "the kernel's comm: 15 characters";
  }
}

// An argument below 10 prints in decimal, as 6.x kernels print it
// ("sys_close(fd: 3)", not "fd: 0x3"); the kernel's own trace of the same
// calls shows it (SyscallOracle.EveryLineHasTheKernelsText).
TEST(SyscallLines, SmallArgumentsPrintInDecimalAsTheKernelPrintsThem) {
  const RunResult run =
      run_traced({"syscalls:sys_enter_close", "syscalls:sys_exit_close"}, {kCalls, "known"});
  ASSERT_EQ(run.status, 0) << run;
  const auto known = known_calls_of(run.out);
  ASSERT_TRUE(known && known->fd < 10) << run;
  EXPECT_THAT(texts_of(parse_syscall_trace(run.out)),
              ElementsAre("sys_close(fd: " + std::to_string(known->fd) + ")", "sys_close -> 0x0"))
      << run;
}

// Every line of every call is the program's one thread's: none is the
// agent's own thread's (its rt_sigreturn as it started once was).
TEST(SyscallLines, OnlyTheProgramsOwnThreadIsTraced) {
  const RunResult run = run_traced({"syscalls:*", "raw_syscalls:*"}, {kCalls, "known"});
  ASSERT_EQ(run.status, 0) << run;
  const auto known = known_calls_of(run.out);
  ASSERT_TRUE(known) << run;
  const auto lines = parse_syscall_trace(run.out);
  ASSERT_FALSE(lines.empty()) << run;
  for (const SyscallLine& line : lines)
    EXPECT_EQ(line.tid, static_cast<uint64_t>(known->pid)) << line;
}

// A program that handles no signal makes no rt_sigreturn, and none is
// traced: the agent's own signals to the program's threads (the tagged
// SIGSEGV of its census, taken before a call site is rewritten) return
// through the agent's restorer, not the C library's, whose rt_sigreturn
// would be traced as the program's.
TEST(SyscallLines, NoSignalReturnThatTheProgramDidNotMake) {
  const RunResult run =
      run_traced({"syscalls:sys_enter_rt_sigreturn"}, {program("syscall_attach_O2"), "1"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_TRUE(parse_syscall_trace(run.out).empty()) << run;
}

// ---- Event probes --------------------------------------------------------------

// The program opens two paths through one buffer and then overwrites it:
// each line has the path of its own call, copied then.
TEST(SyscallEventProbes, PathIsCopiedAtTheCallAndRetIsTheResult) {
  const RunResult run =
      run_traced({"e:io/open syscalls/sys_enter_openat path=+0($filename):ustring flags=$flags:x32",
                  "e:io/opened syscalls/sys_exit_openat r=$ret:s64"},
                 {kCalls, "strings"});
  ASSERT_EQ(run.status, 0) << run;
  const auto fd = last_number_after(run.out, "syscall_calls: strings fd ");
  ASSERT_TRUE(fd) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 4u) << run;
  EXPECT_EQ(lines[0].event, "open");
  EXPECT_EQ(lines[0].location, "syscalls.sys_enter_openat");
  EXPECT_THAT(lines[0].args,
              ElementsAre(TraceArg{"path", "\"/dev/null\""}, TraceArg{"flags", "0x80000"}));
  EXPECT_EQ(lines[1].event, "opened");
  EXPECT_EQ(lines[1].location, "syscalls.sys_exit_openat");
  EXPECT_THAT(lines[1].args, ElementsAre(TraceArg{"r", std::to_string(*fd)}));
  EXPECT_THAT(lines[2].args, ElementsAre(TraceArg{"path", "\"/nonexistent/dprobe-reused\""},
                                         TraceArg{"flags", "0x0"}));
  EXPECT_THAT(lines[3].args, ElementsAre(TraceArg{"r", "-2"}));
  for (const TraceLine& line : lines) EXPECT_EQ(line.comm, "syscall_calls_O") << line;
}

// ---- Selectors and their errors ------------------------------------------------------

TEST(SyscallSelectors, AGlobNamesTheEnterAndExitOfOneCall) {
  const RunResult run = run_traced({"syscalls:sys_*_getppid"}, {kCalls, "known"});
  ASSERT_EQ(run.status, 0) << run;
  const auto known = known_calls_of(run.out);
  ASSERT_TRUE(known) << run;
  const std::string exit = "sys_getppid -> " + exit_value(known->ppid);
  EXPECT_THAT(texts_of(parse_syscall_trace(run.out)),
              ElementsAre("sys_getppid()", exit, "sys_getppid()", exit))
      << run;
}

// raw_syscalls:* is every call, entered and returned, by number: from the
// first getppid on, the known calls in their order.
TEST(SyscallSelectors, RawSyscallsGlobIsEveryCallByNumber) {
  const RunResult run = run_traced({"raw_syscalls:*"}, {kCalls, "known"});
  ASSERT_EQ(run.status, 0) << run;
  const auto known = known_calls_of(run.out);
  ASSERT_TRUE(known) << run;
  const auto lines = parse_syscall_trace(run.out);
  const auto first = std::find_if(lines.begin(), lines.end(), [](const SyscallLine& line) {
    return line.text.starts_with("sys_enter: NR 110 (");
  });
  ASSERT_GE(lines.end() - first, 12) << run;
  const std::vector<SyscallLine> calls(first, first + 12);
  std::vector<long> entered;
  std::vector<std::string> returned;
  for (const SyscallLine& line : calls) {
    ASSERT_TRUE(line.is_raw()) << line;
    if (line.text.starts_with("sys_enter:")) entered.push_back(line.raw_nr());
    if (line.text.starts_with("sys_exit:")) returned.push_back(line.text);
  }
  // getppid 110, openat 257, close 3, sched_yield 24.
  EXPECT_THAT(entered, ElementsAre(110, 257, 3, 257, 24, 110));
  const std::string ppid = std::to_string(known->ppid);
  EXPECT_THAT(returned, ElementsAre("sys_exit: NR 110 = " + ppid,
                                    "sys_exit: NR 257 = " + std::to_string(known->fd),
                                    "sys_exit: NR 3 = 0", "sys_exit: NR 257 = -2",
                                    "sys_exit: NR 24 = 0", "sys_exit: NR 110 = " + ppid));
  // The raw enter line has all six argument registers, in %lx.
  std::string null_path = known->null_path.substr(2);
  EXPECT_TRUE(
      calls[2].text.starts_with("sys_enter: NR 257 (ffffff9c, " + null_path + ", 80000, 0, "))
      << calls[2];
}

struct BadDefinition {
  std::string name;  // of the test case
  std::string definition;
  std::string error;  // the message and its code, as the kernel's error_log says it
  std::string at;     // the text the caret is under
};

void PrintTo(const BadDefinition& bad, std::ostream* os) { *os << bad.definition; }

class SyscallBadDefinitions : public ::testing::TestWithParam<BadDefinition> {};

// Exit status 2, the error with the definition and a caret, and the
// program never started: the file it would create is not there.
TEST_P(SyscallBadDefinitions, AreErrorsAndTheProgramNeverRuns) {
  const BadDefinition& bad = GetParam();
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string witness = dir.file("ran");
  const RunResult run =
      run_traced({bad.definition}, {program("syscall_edges_O2"), "closeall", witness});
  EXPECT_EQ(run.status, 2) << run;
  const size_t column = bad.definition.find(bad.at);
  ASSERT_NE(column, std::string::npos);
  EXPECT_THAT(run.err, HasSubstr("dprobe: error: " + bad.error + "\n  Command: " + bad.definition +
                                 "\n" + caret_at(column)))
      << run;
  EXPECT_FALSE(std::filesystem::exists(witness)) << "the program ran: " << run;
  EXPECT_TRUE(parse_syscall_trace(run.out).empty()) << run;
}

INSTANTIATE_TEST_SUITE_P(
    SyscallSelectors, SyscallBadDefinitions,
    ::testing::Values(
        BadDefinition{"UnknownEvent", "syscalls:sys_enter_nosuch",
                      "No such system call event (NO_TRACEPOINT)", "sys_enter_nosuch"},
        BadDefinition{"GlobMatchingNothing", "syscalls:sys_*_nosuch*",
                      "No such system call event (NO_TRACEPOINT)", "sys_*_nosuch*"},
        BadDefinition{"UnknownRawEvent", "raw_syscalls:sys_nosuch",
                      "No such system call event (NO_TRACEPOINT)", "sys_nosuch"},
        BadDefinition{"UnknownField", "e:io/x syscalls/sys_enter_openat v=$nosuch",
                      "Attached event does not have this field (BAD_ATTACH_ARG)", "$nosuch"},
        BadDefinition{"EnterFieldOnExit", "e:io/x syscalls/sys_exit_openat v=$filename",
                      "Attached event does not have this field (BAD_ATTACH_ARG)", "$filename"},
        BadDefinition{"UnknownAttachedEvent", "e:io/x syscalls/sys_enter_nosuch",
                      "Attached event does not exist (BAD_ATTACH_EVENT)", "syscalls/"}),
    [](const ::testing::TestParamInfo<BadDefinition>& info) { return info.param.name; });

// ---- --summary ---------------------------------------------------------------------

TEST(SyscallSummary, CountsEveryCallOfTheProgram) {
  const RunResult run = run_traced({}, {kCalls, "getppid", "1000"}, {"--summary"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("syscall_calls: getppid 1000\n")) << run;
  EXPECT_TRUE(parse_syscall_trace(run.out).empty()) << "a table, no trace: " << run;
  const auto rows = summary_rows(run.err);
  ASSERT_TRUE(rows.contains("getppid")) << run;
  EXPECT_EQ(rows.at("getppid").calls, 1000u) << run;
  EXPECT_EQ(rows.at("getppid").errors, 0u) << run;
  EXPECT_THAT(run.err, HasSubstr("% time     seconds  usecs/call     calls    errors syscall\n"));
  ASSERT_TRUE(rows.contains("total")) << run;
  EXPECT_GT(rows.at("total").calls, 1000u) << "and the write of its line: " << run;
  // From the program's execve, as strace counts: the dynamic loader's
  // calls before the agent too, and nothing said under the table.
  ASSERT_TRUE(rows.contains("execve")) << run;
  EXPECT_EQ(rows.at("execve").calls, 1u) << run;
  EXPECT_THAT(run.err, Not(HasSubstr("not counted"))) << run;
}

TEST(SyscallSummary, FailedCallsAreCountedAsErrors) {
  const RunResult run =
      run_traced({"syscalls:sys_enter_getppid"}, {kCalls, "known"}, {"--summary"});
  ASSERT_EQ(run.status, 0) << run;
  const auto rows = summary_rows(run.err);
  ASSERT_TRUE(rows.contains("openat") && rows.contains("getppid")) << run;
  // The program's 2 and the dynamic loader's 2 (ld.so.cache, libc.so.6).
  EXPECT_EQ(rows.at("openat").calls, 4u) << run;
  EXPECT_EQ(rows.at("openat").errors, 1u) << "the missing path: " << run;
  EXPECT_EQ(rows.at("getppid").calls, 2u) << run;
  EXPECT_EQ(rows.at("sched_yield").calls, 1u) << run;
  EXPECT_EQ(rows.at("close").calls, 3u) << run;
  EXPECT_THAT(run.err, Not(HasSubstr("not in the trace"))) << "no getppid before the agent";
  // The events are traced as well.
  EXPECT_THAT(texts_of(parse_syscall_trace(run.out)),
              ElementsAre("sys_getppid()", "sys_getppid()"));
}

}  // namespace
}  // namespace dprobe::integration
