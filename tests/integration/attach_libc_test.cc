// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach` with every function of the C library probed, in
// processes that run on meanwhile: the probes are armed by the agent's own
// thread while the thread dprobe borrowed waits, parked (controller.h), so
// the breakpoints its arming reaches are no ptrace stops, and the probes
// become jumps. Without that, each of the borrowed thread's traps was a
// stop the CLI passed on: arming took seconds, and no probe became a jump.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kPython = "/usr/bin/python3";

// Six threads hash a chain until the file `stop` exists, then each checks
// its chain against one computed again: "done 6 ok" when every link held.
constexpr const char* kHashers = R"(import hashlib, os, sys, threading
stop = sys.argv[1]
results = []
def chain(n):
    h = b'seed'
    for _ in range(n):
        h = hashlib.sha256(h).digest()
    return h
def work():
    h, n = b'seed', 0
    while not os.path.exists(stop):
        h = hashlib.sha256(h).digest()
        n += 1
    results.append(chain(n) == h)
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads: t.start()
print('ready', flush=True)
for t in threads: t.join()
print('done', len(results), 'ok' if all(results) else 'WRONG', flush=True)
)";

// Threads started and joined without pause, four at a time, until the
// file `stop` exists: "started N" (a multiple of 4) at the end.
constexpr const char* kThreadStarter = R"(import hashlib, os, sys, threading
stop = sys.argv[1]
def work():
    hashlib.sha256(b'x' * 1000).hexdigest()
started = 0
print('ready', flush=True)
while not os.path.exists(stop):
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    started += 4
print('started', started % 4 == 0 and started > 0, flush=True)
)";

size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// (Once, in a clean-clone CI run under load, the attach ended with status
// 2: then any failure of the agent's start did, and the call that runs it
// gave up after 10 s while the CLI alone spent over a second looking for
// libc 5,000 times. Both are gone: 60 s, once, and status 1 with a message.)
TEST(AttachLibc, EveryFunctionInAThreadedPythonBecomesAJumpAndThePythonRunsOn) {
  if (::access(kPython, X_OK) != 0) GTEST_SKIP() << "needs " << kPython;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file("hashers.py"), kHashers);
  const std::string stop = dir.file("stop");
  LiveProcess python({kPython, dir.file("hashers.py"), stop}, dir.file("py.out"),
                     dir.file("py.err"));
  ASSERT_TRUE(python.started() && python.wait_for_output("ready", patience(2))) << python.err();

  const RunResult run = run_dprobe({"attach", "-p", std::to_string(python.pid()), "-e",
                                    "p libc.so.6:*", "-e", "r libc.so.6:*", "--probes",
                                    "--buffer-size", "16K", "--duration", "1", "-o", "/dev/null"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, Not(HasSubstr("did not drain"))) << run;
  // Of about 2,100 places listed (a function's entry and return probes
  // share one), the hundred or so left as breakpoints are so for their
  // code (short functions, jump tables), not for where the threads were.
  const size_t optimized = count_of(run.err, "[OPTIMIZED]");
  const size_t breakpoints = count_of(run.err, "[BREAKPOINT");
  EXPECT_GT(optimized, 1800u) << breakpoints << " breakpoints\n" << run;
  EXPECT_LT(breakpoints, optimized / 8) << run;

  write_file(stop, "");
  EXPECT_EQ(python.wait(patience(3)), 0) << python.err();
  EXPECT_EQ(python.out(), "ready\ndone 6 ok\n") << python.err();
}

// Its main thread is in pthread_create most of the time, often with every
// signal blocked (around clone), and threads run their start and exit code
// (some of it with every signal blocked too) all along: attached to again
// and again with every function of libc probed, it lives on and ends as
// it would have. (Stopped inside clone3, at its PTRACE_EVENT_CLONE stop,
// the main thread once made dprobe's calls from there, and got back
// registers that said clone3 had failed: glibc made the thread again with
// clone, and Python freed its state twice.)
TEST(AttachLibc, APythonStartingThreadsWithoutPauseLivesThroughAttaches) {
  if (::access(kPython, X_OK) != 0) GTEST_SKIP() << "needs " << kPython;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file("starter.py"), kThreadStarter);
  const std::string stop = dir.file("stop");
  LiveProcess python({kPython, dir.file("starter.py"), stop}, dir.file("py.out"),
                     dir.file("py.err"));
  ASSERT_TRUE(python.started() && python.wait_for_output("ready", patience(2))) << python.err();
  for (int attach = 0; attach < 6; ++attach) {
    const RunResult run = run_dprobe({"attach", "-p", std::to_string(python.pid()), "-e",
                                      "p libc.so.6:*", "-e", "r libc.so.6:*", "--buffer-size",
                                      "16K", "--duration", "0.3", "-o", "/dev/null"});
    ASSERT_EQ(run.status, 0) << "attach " << attach << ": " << run << "\n" << python.err();
  }
  write_file(stop, "");
  EXPECT_EQ(python.wait(patience(3)), 0) << python.err();
  EXPECT_EQ(python.out(), "ready\nstarted True\n") << python.err();
}

// A thread with every signal blocked calls the probed function every
// 500 us: attached to again and again, it never reaches a breakpoint,
// which would kill it. dprobe holds the program's threads stopped while
// the agent arms (the probe is a breakpoint for a moment before it becomes
// a jump) and while it detaches (each jump goes back in one write). Before
// the hold at detach, one attach in about 70 killed it.
TEST(AttachLibc, AThreadWithEverySignalBlockedNeverSeesABreakpointAtAttachOrDetach) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess masked({program("attach_sleeper_O2"), "masked", "120"}, dir.file("masked.out"),
                     dir.file("masked.err"));
  ASSERT_TRUE(masked.started() && masked.wait_for_output("masked ready", patience(2)))
      << masked.err();
  const std::string exe = executable_path(masked.pid());
  for (int attach = 0; attach < 40; ++attach) {
    const RunResult run =
        run_dprobe({"attach", "-p", std::to_string(masked.pid()), "-e", "p:g/m masked_probe",
                    "--probes", "--duration", "0.05", "-o", "/dev/null"});
    ASSERT_EQ(run.status, 0) << "attach " << attach << ": " << run << "\n" << masked.err();
    EXPECT_THAT(run.err, testing::ContainsRegex("masked_probe\\+0x0/0x[0-9a-f]+  \\[OPTIMIZED\\]"))
        << run;
    ASSERT_TRUE(process_running(masked.pid())) << "attach " << attach << ": " << masked.err();
  }
  EXPECT_EQ(text_differences_from_file(masked.pid(), exe), "");
}

// A process of one thread: functions the C library runs with every signal
// blocked (getpid in thread start, dup2 in posix_spawn's child) take a
// jump, written while the borrowed thread is parked and nothing else runs;
// a breakpoint there could kill the process.
TEST(AttachLibc, AProcessOfOneThreadTakesJumpsWhereABreakpointCouldKillIt) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess sleeper({program("attach_sleeper_O2"), "sleep", "3000"}, dir.file("sleeper.out"),
                      dir.file("sleeper.err"));
  ASSERT_TRUE(sleeper.started() && sleeper.wait_for_output("sleeping", patience(2)))
      << sleeper.err();

  const RunResult run = run_dprobe({"attach", "-p", std::to_string(sleeper.pid()), "-e",
                                    "p:g/pid libc.so.6:getpid", "-e", "p:g/dup libc.so.6:dup2",
                                    "--probes", "--duration", "0.3", "-o", "/dev/null"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, testing::ContainsRegex("getpid\\+0x0/0x[0-9a-f]+  \\[OPTIMIZED\\]")) << run;
  EXPECT_THAT(run.err, testing::ContainsRegex("dup2\\+0x0/0x[0-9a-f]+  \\[OPTIMIZED\\]")) << run;
  // Jumps no breakpoint may replace go back in one write, the process held
  // still: the C library is as in its file again (they stayed before).
  EXPECT_EQ(text_differences_from_file(sleeper.pid(), mapped_path(sleeper.pid(), "/libc.so.6")),
            "");

  EXPECT_EQ(sleeper.wait(patience(3)), 0) << sleeper.err();
  EXPECT_TRUE(std::regex_search(sleeper.out(), std::regex("slept 0 0 [0-9]+"))) << sleeper.out();
}

// Its only thread sleeps in nanosleep through two attaches: each holds
// it at detach, and the second borrows it for its calls, whose breakpoint
// handlers reset the thread's restart block. Let go after the first
// detach to restart through restart_syscall, the thread came back from the
// second attach with EINTR; let go to issue nanosleep again, it sleeps on.
TEST(AttachLibc, ASleepingThreadAttachedToTwiceSleepsOnWithoutEINTR) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess sleeper({program("attach_sleeper_O2"), "sleep", "4000"}, dir.file("sleeper.out"),
                      dir.file("sleeper.err"));
  ASSERT_TRUE(sleeper.started() && sleeper.wait_for_output("sleeping", patience(2)))
      << sleeper.err();
  for (int attach = 0; attach < 2; ++attach) {
    const RunResult run =
        run_dprobe({"attach", "-p", std::to_string(sleeper.pid()), "-e", "p:g/m libc.so.6:malloc",
                    "--duration", "0.1", "-o", "/dev/null"});
    ASSERT_EQ(run.status, 0) << "attach " << attach << ": " << run;
  }
  EXPECT_EQ(sleeper.wait(patience(3)), 0) << sleeper.err();
  EXPECT_TRUE(std::regex_search(sleeper.out(), std::regex("slept 0 0 [0-9]+"))) << sleeper.out();
}

// Attached while its main thread waits with every signal blocked (as in
// pthread_create's clone), the calls dprobe has that thread make (dlopen,
// dlclose) reach breakpoints (--no-optimize keeps them so): the agent's
// signals are let through for the calls, and the thread's own mask comes
// back after them. Blocked, the first trap killed the process. Being
// dprobe's own calls, they count nothing.
TEST(AttachLibc, AMainThreadStoppedWithEverySignalBlockedMakesItsCallsThroughBreakpoints) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess sleeper({program("attach_sleeper_O2"), "blocked", "3000"}, dir.file("sleeper.out"),
                      dir.file("sleeper.err"));
  ASSERT_TRUE(sleeper.started() && sleeper.wait_for_output("sleeping blocked", patience(2)))
      << sleeper.err();
  const std::string status = "/proc/" + std::to_string(sleeper.pid()) + "/status";
  ASSERT_THAT(read_file(status), HasSubstr("SigBlk:\tfffffffe7ffbfeff")) << read_file(status);

  const RunResult run =
      run_dprobe({"attach", "-p", std::to_string(sleeper.pid()), "-e",
                  "p:g/close libc.so.6:dlclose", "-e", "p:g/open libc.so.6:dlopen", "--no-optimize",
                  "--profile", "--duration", "0.3", "-o", "/dev/null"});
  ASSERT_EQ(run.status, 0) << run;
  const auto closes = profile_row(parse_profile(run.err), "close");
  ASSERT_TRUE(closes) << run;
  // dprobe's own dlclose of its hook runs through the breakpoint (blocked,
  // the trap would have killed the process) and, being dprobe's, counts
  // nothing.
  EXPECT_EQ(closes->hits, 0u) << run;
  EXPECT_THAT(read_file(status), HasSubstr("SigBlk:\tfffffffe7ffbfeff")) << "the mask given back";

  EXPECT_EQ(sleeper.wait(patience(3)), 0) << sleeper.err();
  EXPECT_TRUE(std::regex_search(sleeper.out(), std::regex("slept 0 0 [0-9]+"))) << sleeper.out();
}

}  // namespace
}  // namespace dprobe::integration
