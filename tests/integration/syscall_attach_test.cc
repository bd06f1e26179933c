// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach -p PID -e syscalls:...` on a running program whose three
// threads make system calls in rounds (tests/programs/syscall_attach.c):
// every thread's calls are traced from the attach on; after dprobe is
// stopped with SIGINT the program runs on, its calls answered as before
// (it checks each one); and a second attach to it works as the first did.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"
#include "integration/syscall_lines.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;

// syscall_attach_O2, started and ready: its three workers' tids.
struct Target {
  explicit Target(const TempDir& dir, int seconds)
      : process({program("syscall_attach_O2"), std::to_string(seconds)}, dir.file("target.out"),
                dir.file("target.err")) {
    if (!process.started() || !process.wait_for_output("syscall_attach: ready", patience(2)))
      return;
    const std::string out = process.out();
    const size_t at = out.find(" tids ");
    std::istringstream fields(out.substr(at + 6));
    for (uint64_t tid = 0; tids.size() < 3 && fields >> tid;) tids.insert(tid);
  }
  uint64_t rounds() const {
    return last_number_after(process.out(), "syscall_attach: rounds ").value_or(0);
  }
  // Its rounds go on, each call answered as it should be.
  bool running_well() const {
    const uint64_t before = rounds();
    return eventually([&] { return rounds() > before + 30; }, patience()) &&
           process.out().ends_with(" bad 0\n");
  }

  LiveProcess process;
  std::set<uint64_t> tids;
};

// One `dprobe attach` with `definitions`, until every worker has a line in
// the trace, then stopped with SIGINT: its trace.
std::vector<SyscallLine> attach_until_every_thread_traced(
    const TempDir& dir, const Target& target, const std::vector<std::string>& definitions,
    const std::string& name) {
  std::vector<std::string> args{DPROBE_BINARY, "attach",
                                "-p",          std::to_string(target.process.pid()),
                                "-o",          dir.file(name + ".trace")};
  for (const std::string& definition : definitions) {
    args.push_back("-e");
    args.push_back(definition);
  }
  LiveProcess attach(args, dir.file(name + ".out"), dir.file(name + ".err"));
  EXPECT_TRUE(attach.started());
  const auto traced_threads = [&] {
    std::set<uint64_t> seen;
    for (const SyscallLine& line : parse_syscall_trace(read_file(dir.file(name + ".trace"))))
      seen.insert(line.tid);
    return seen;
  };
  EXPECT_TRUE(eventually([&] { return traced_threads() == target.tids; }, patience(2)))
      << name << ": " << attach.err();
  attach.signal(SIGINT);
  EXPECT_EQ(attach.wait(patience(3)), 0) << name << ": " << attach.err();
  EXPECT_EQ(attach.err(), "") << name;
  return parse_syscall_trace(read_file(dir.file(name + ".trace")));
}

TEST(SyscallAttach, EveryThreadIsTracedAndTheProgramRunsOnAfterEachDetach) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Target target(dir, 6);
  ASSERT_EQ(target.tids.size(), 3u) << target.process.out() << target.process.err();
  const pid_t pid = target.process.pid();

  const auto first =
      attach_until_every_thread_traced(dir, target, {"syscalls:sys_enter_getppid"}, "first");
  for (const SyscallLine& line : first) {
    ASSERT_EQ(line.text, "sys_getppid()") << line;
    ASSERT_EQ(line.comm, "syscall_attach_");
    ASSERT_TRUE(target.tids.contains(line.tid)) << line << ": not a worker";
  }
  EXPECT_TRUE(process_running(pid));
  EXPECT_TRUE(target.running_well()) << target.process.out().substr(0, 2000);

  // Again, with the exits: each is the workers' parent, this test.
  const auto second = attach_until_every_thread_traced(
      dir, target, {"syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid"}, "second");
  const std::string exit = "sys_getppid -> " + exit_value(::getpid());
  size_t exits = 0;
  for (const SyscallLine& line : second) {
    ASSERT_TRUE(target.tids.contains(line.tid)) << line << ": not a worker";
    if (!line.is_exit()) continue;
    ASSERT_EQ(line.text, exit) << line;
    ++exits;
  }
  EXPECT_GT(exits, 0u);
  EXPECT_TRUE(process_running(pid));
  EXPECT_TRUE(target.running_well()) << target.process.out().substr(0, 2000);

  EXPECT_EQ(target.process.wait(patience(3)), 0) << target.process.out().substr(0, 2000);
  EXPECT_THAT(target.process.out(), HasSubstr(" bad 0\n"));
  EXPECT_THAT(target.process.out(), HasSubstr("syscall_attach: done rounds "));
}

}  // namespace
}  // namespace dprobe::integration
