// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// System calls of threads and processes: threads calling at once are each
// traced call by call (tests/programs/syscall_calls.c); children made by
// fork, fork and exec, posix_spawn and vfork are traced under their own
// pids with --follow, run untraced without it (and dprobe says so); a
// process that execs is traced on (tests/programs/syscall_procs.c).
// getppid is the marker: each process makes a known number of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"
#include "integration/syscall_lines.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kProcs = program("syscall_procs_O2");
// The child's name, or "?" when it was gone before its name could be read
// (a short child on a loaded machine).
const auto kUntracedChild = ::testing::ContainsRegex(
    "dprobe: 1 child process ran untraced \\((syscall_procs_O|\\?)\\); --follow traces it\n");

// The getppid calls each process (or thread) made, by tid.
std::map<uint64_t, size_t> getppid_calls(const std::string& trace) {
  std::vector<SyscallLine> enters;
  for (const SyscallLine& line : parse_syscall_trace(trace)) {
    if (line.text == "sys_getppid()") enters.push_back(line);
  }
  return lines_per_tid(enters);
}

struct Pids {
  uint64_t parent = 0;
  uint64_t child = 0;
};

// "syscall_procs: parent PID child PID".
Pids pids_of(const std::string& out) {
  return {last_number_after(out, "syscall_procs: parent ").value_or(0),
          last_number_after(out, " child ").value_or(0)};
}

// ---- Threads -----------------------------------------------------------------------

// Eight threads make 10,000 getppid calls each, all at once: every call's
// enter and exit is there under its thread's tid, the exit with the
// parent's pid; main's one call besides. Nothing lost.
TEST(SyscallThreads, EveryCallOfEveryThreadIsTraced) {
  constexpr size_t kThreads = 8;
  constexpr size_t kCalls = 10000;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult run = run_traced(
      {"syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid"},
      {program("syscall_calls_O2"), "threads", std::to_string(kThreads), std::to_string(kCalls)},
      {"--profile", "--buffer-size", "4M", "-o", dir.file("trace")});
  ASSERT_EQ(run.status, 0) << run;
  const auto row = profile_row(parse_profile(run.err), "sys_enter_getppid");
  ASSERT_TRUE(row) << run;
  EXPECT_EQ(row->hits, kThreads * kCalls + 1);
  EXPECT_EQ(row->misses, 0u);
  const std::string trace = read_file(dir.file("trace"));
  const auto lines = parse_syscall_trace(trace);
  ASSERT_EQ(lines.size(), 2 * (kThreads * kCalls + 1)) << run;
  const std::string exit = lines[1].text;  // main's call, first of all
  EXPECT_TRUE(exit.starts_with("sys_getppid -> 0x")) << exit;
  std::map<uint64_t, size_t> exits;
  for (const SyscallLine& line : lines) {
    if (line.is_exit()) {
      EXPECT_EQ(line.text, exit) << line;
      ++exits[line.tid];
    }
  }
  const auto enters = getppid_calls(trace);
  size_t workers = 0;
  for (size_t at = run.out.find("syscall_calls: tid "); at != std::string::npos;
       at = run.out.find("syscall_calls: tid ", at + 1), ++workers) {
    const uint64_t tid = std::stoull(run.out.substr(at + 19));
    EXPECT_EQ(enters.contains(tid) ? enters.at(tid) : 0, kCalls) << "thread " << tid;
    EXPECT_EQ(exits[tid], kCalls) << "thread " << tid;
  }
  EXPECT_EQ(workers, kThreads) << run;
  EXPECT_EQ(enters.size(), kThreads + 1) << "the workers and main";
}

// ---- fork ---------------------------------------------------------------------------

TEST(SyscallProcesses, WithoutFollowAForkedChildRunsUntraced) {
  const RunResult run = run_traced({"syscalls:sys_enter_getppid"}, {kProcs, "fork"});
  ASSERT_EQ(run.status, 0) << run;
  const Pids pids = pids_of(run.out);
  ASSERT_NE(pids.child, 0u) << run;
  EXPECT_EQ(getppid_calls(run.out), (std::map<uint64_t, size_t>{{pids.parent, 4}})) << run;
  EXPECT_THAT(run.err, kUntracedChild) << run;
}

TEST(SyscallProcesses, WithFollowAForkedChildIsTracedUnderItsPid) {
  const RunResult run = run_traced({"syscalls:sys_enter_getppid"}, {kProcs, "fork"}, {"--follow"});
  ASSERT_EQ(run.status, 0) << run;
  const Pids pids = pids_of(run.out);
  ASSERT_NE(pids.child, 0u) << run;
  EXPECT_EQ(getppid_calls(run.out), (std::map<uint64_t, size_t>{{pids.parent, 4}, {pids.child, 2}}))
      << run;
  // In time order: the parent's first call, the child's two, the parent's three.
  std::vector<uint64_t> order;
  for (const SyscallLine& line : parse_syscall_trace(run.out)) {
    order.push_back(line.tid);
    EXPECT_EQ(line.comm, "syscall_procs_O") << line;
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{pids.parent, pids.child, pids.child, pids.parent,
                                          pids.parent, pids.parent}));
  EXPECT_THAT(run.err, Not(HasSubstr("untraced"))) << run;
}

// ---- Children that run another program -------------------------------------------------

struct ChildCase {
  const char* mode;  // syscall_procs's: how the child is made
  size_t marks;      // the getppid calls of the program it runs
};

void PrintTo(const ChildCase& child, std::ostream* os) { *os << child.mode << " " << child.marks; }

class SyscallChildren : public ::testing::TestWithParam<std::tuple<ChildCase, bool>> {
 protected:
  const ChildCase& child_case() const { return std::get<0>(GetParam()); }
  bool follow() const { return std::get<1>(GetParam()); }
};

TEST_P(SyscallChildren, AreTracedUnderTheirPidsOnlyWithFollow) {
  const std::vector<std::string> options =
      follow() ? std::vector<std::string>{"--follow"} : std::vector<std::string>{};
  const RunResult run =
      run_traced({"syscalls:sys_enter_getppid"},
                 {kProcs, child_case().mode, std::to_string(child_case().marks)}, options);
  ASSERT_EQ(run.status, 0) << run;
  const Pids pids = pids_of(run.out);
  ASSERT_NE(pids.child, 0u) << run;
  EXPECT_THAT(run.out, HasSubstr("syscall_procs: marks " + std::to_string(pids.child) + " " +
                                 std::to_string(child_case().marks) + "\n"))
      << "the child ran its program: " << run;
  std::map<uint64_t, size_t> expected{{pids.parent, 4}};
  if (follow()) expected[pids.child] = child_case().marks;
  EXPECT_EQ(getppid_calls(run.out), expected) << run;
  if (follow()) {
    EXPECT_THAT(run.err, Not(HasSubstr("untraced"))) << run;
  } else {
    EXPECT_THAT(run.err, kUntracedChild) << run;
  }
}

INSTANTIATE_TEST_SUITE_P(SyscallProcesses, SyscallChildren,
                         ::testing::Combine(::testing::Values(ChildCase{"forkexec", 4},
                                                              ChildCase{"spawn", 5},
                                                              ChildCase{"vfork", 6}),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<ChildCase, bool>>& info) {
                           return std::string(std::get<0>(info.param).mode) +
                                  (std::get<1>(info.param) ? "Follow" : "NoFollow");
                         });

// A process that execs is the same process: traced on in the new program,
// with or without --follow.
class SyscallExec : public ::testing::TestWithParam<bool> {};

TEST_P(SyscallExec, AProcessThatExecsIsTracedOn) {
  const std::vector<std::string> options =
      GetParam() ? std::vector<std::string>{"--follow"} : std::vector<std::string>{};
  const RunResult run = run_traced({"syscalls:sys_enter_getppid"}, {kProcs, "exec", "7"}, options);
  ASSERT_EQ(run.status, 0) << run;
  const auto pid = last_number_after(run.out, "syscall_procs: exec ");
  ASSERT_TRUE(pid) << run;
  EXPECT_THAT(run.out, HasSubstr("syscall_procs: marks " + std::to_string(*pid) + " 7\n")) << run;
  EXPECT_EQ(getppid_calls(run.out), (std::map<uint64_t, size_t>{{*pid, 8}})) << run;
}

INSTANTIATE_TEST_SUITE_P(SyscallProcesses, SyscallExec, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Follow" : "NoFollow";
                         });

}  // namespace
}  // namespace dprobe::integration
