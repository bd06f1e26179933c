// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Attaching where it is not simple (tests/programs/attach_sleeper.c,
// busy_loop.c): into a nanosleep (which must neither fail with EINTR nor
// end early), into a process whose main thread has exited, into a process
// already traced by strace or by another dprobe (refused, before
// anything is injected, with the tracer named).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

const std::string kSleeperProbe = "p:g/s sleeper_probe i=%di";

// A child of `parent` (the program strace started), 0 if none.
pid_t child_of(pid_t parent) {
  for (const support::ProcessStat& process : support::all_processes()) {
    if (process.parent == parent) return process.pid;
  }
  return 0;
}

// The calls made in the stopped target run signal handlers (the agent's breakpoint
// on the loader), and their sigreturn resets the restart block the interrupted
// nanosleep needs: the restore makes the thread issue it again (traced_process.cc).
TEST(AttachRaces, NanosleepOfTheTargetIsNeitherInterruptedNorShortened) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess target({program("attach_sleeper_O0"), "sleep", "2000"}, dir.file("t.out"),
                     dir.file("t.err"));
  ASSERT_TRUE(target.wait_for_output("attach_sleeper: sleeping", patience(2)));
  std::this_thread::sleep_for(200ms);
  const RunResult attach = run_dprobe(
      {"attach", "-p", std::to_string(target.pid()), "-e", kSleeperProbe, "--duration", "0.2"});
  EXPECT_EQ(attach.status, 0) << attach;
  ASSERT_EQ(target.wait(patience(3)), 0);
  const std::string out = target.out();
  EXPECT_THAT(out, HasSubstr("attach_sleeper: slept 0 0 ")) << out;
  EXPECT_GE(last_number_after(out, "attach_sleeper: slept 0 0 ").value_or(0), 1990u) << out;
}

// A main thread that called pthread_exit is a zombie with no memory of its own in
// /proc: the CLI seizes past it and works through a live thread (maps, memory,
// calls), and the agent reads /proc/thread-self (exe, mem, stat), never the
// leader's /proc/self.
TEST(AttachRaces, ProcessWhoseMainThreadExitedIsAttachedThroughALiveThread) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess target({program("attach_sleeper_O0"), "orphan", "8"}, dir.file("t.out"),
                     dir.file("t.err"));
  ASSERT_TRUE(target.wait_for_output("attach_sleeper: worker ready", patience(2)));
  ASSERT_TRUE(eventually([&] { return process_state(target.pid()) == 'Z'; }, patience()));
  const RunResult attach = run_dprobe({"attach", "-p", std::to_string(target.pid()), "-e",
                                       kSleeperProbe, "--duration", "0.5", "--profile"});
  EXPECT_EQ(attach.status, 0) << attach;
  EXPECT_THAT(attach.err, Not(HasSubstr("exited"))) << attach;
  const auto row = profile_row(parse_profile(attach.err), "s");
  EXPECT_TRUE(row && row->hits > 0) << attach;
  EXPECT_EQ(target.wait(patience(3)), 0);
  EXPECT_THAT(target.out(), HasSubstr("attach_sleeper: worker calls")) << target.out();
}

TEST(AttachRaces, ProcessUnderStraceIsRefusedNamingTheTracer) {
  const std::string strace = find_tool("strace");
  if (strace.empty()) GTEST_SKIP() << "needs strace";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess traced({strace, "-o", "/dev/null", program("busy_loop_O2"), "1", "30"},
                     dir.file("b.out"), dir.file("b.err"));
  ASSERT_TRUE(traced.wait_for_output("busy_loop: ready", patience(2))) << traced.err();
  const pid_t busy = child_of(traced.pid());
  ASSERT_GT(busy, 0);
  const RunResult attach = run_dprobe(
      {"attach", "-p", std::to_string(busy), "-e", "p:g/b busy_probe", "--duration", "0.2"});
  EXPECT_NE(attach.status, 0) << attach;
  EXPECT_THAT(attach.err,
              HasSubstr("is already traced by strace (pid " + std::to_string(traced.pid()) + ")"))
      << attach;
  EXPECT_THAT(attach.err, Not(HasSubstr("set-uid"))) << attach;
}

// A second session (here into a `dprobe run`) is refused at once: no
// injected dlopen, no crash of the target, no wait.
TEST(AttachRaces, ProcessTracedByDprobeIsRefusedAndUnharmed) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  for (int round = 0; round < 4; ++round) {
    LiveProcess run({DPROBE_BINARY, "run", "-e", "p:g/b busy_probe", "-o", dir.file("trace"), "--",
                     program("busy_loop_O2"), "1", "30"},
                    dir.file("r.out"), dir.file("r.err"));
    ASSERT_TRUE(run.wait_for_output("busy_loop: ready", patience(2))) << run.err();
    const pid_t busy = run.pid();  // dprobe run became the program
    const pid_t collector = dprobe_collector(busy);
    ASSERT_GT(collector, 0);
    const auto start = std::chrono::steady_clock::now();
    const RunResult attach = run_dprobe(
        {"attach", "-p", std::to_string(busy), "-e", "p:g/c busy_probe", "--duration", "0.2"});
    // At once: well within what a session that waited for the agent (its
    // 10 s start-up limit) would take, scaled to this run's machine.
    EXPECT_LT(std::chrono::steady_clock::now() - start, patience() / 2);
    EXPECT_NE(attach.status, 0) << attach;
    EXPECT_THAT(attach.err,
                HasSubstr("process " + std::to_string(busy) + " is already traced by dprobe (pid " +
                          std::to_string(collector) + ")"))
        << attach;
    const uint64_t before = last_number_after(run.out(), "busy_loop: calls ").value_or(0);
    EXPECT_TRUE(eventually(
        [&] { return last_number_after(run.out(), "busy_loop: calls ").value_or(0) > before; },
        patience()))
        << "the traced program stopped: " << run.err();
    EXPECT_TRUE(process_running(busy));
  }
}

size_t sockets_of(pid_t pid) {
  size_t count = 0;
  std::error_code ec;
  for (const auto& fd :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const auto target = std::filesystem::read_symlink(fd.path(), ec);
    if (!ec && target.string().rfind("socket:", 0) == 0) ++count;
  }
  return count;
}

// An attach the agent refuses once it is in (a probe on the blacklist) leaves
// nothing behind in the target: no socket, no session (the next attach works).
TEST(AttachRaces, RefusedAttachLeavesNoSocketInTheTarget) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess target({program("busy_loop_O2"), "1", "30"}, dir.file("b.out"), dir.file("b.err"));
  ASSERT_TRUE(target.wait_for_output("busy_loop: ready", patience(2))) << target.err();
  const size_t before = sockets_of(target.pid());
  for (int round = 0; round < 3; ++round) {
    const RunResult refused = run_dprobe({"attach", "-p", std::to_string(target.pid()), "-e",
                                          "p:g/x libc.so.6:getpid", "--duration", "0.2"});
    EXPECT_NE(refused.status, 0) << refused;
    EXPECT_THAT(refused.err, HasSubstr("BLACKLISTED")) << refused;
    EXPECT_TRUE(eventually([&] { return sockets_of(target.pid()) == before; }, patience()))
        << sockets_of(target.pid()) << " sockets, " << before << " before";
  }
  const RunResult attach = run_dprobe({"attach", "-p", std::to_string(target.pid()), "-e",
                                       "p:g/b busy_probe", "--duration", "0.3", "--profile"});
  EXPECT_EQ(attach.status, 0) << attach;
  const auto row = profile_row(parse_profile(attach.err), "b");
  EXPECT_TRUE(row && row->hits > 0) << attach;
  EXPECT_TRUE(eventually([&] { return sockets_of(target.pid()) == before; }, patience()));
  EXPECT_TRUE(process_running(target.pid()));
}

}  // namespace
}  // namespace dprobe::integration
