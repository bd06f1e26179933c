// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What a terminal gets that a file or a pipe does not (a pty stands in for
// the terminal): a long attach is not silent, stderr shows "dprobe:
// tracing 1 probe in pid N, H hits, Ctrl-C to end", refreshed, erased at
// the end (the probe: main's clock every 20 ms); the profile is headed and
// sorted, most hits first, where a script gets the kernel's kprobe_profile
// layout in the order of the definitions.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;

// `args` run with stderr on a new pty, stdout and stdin on /dev/null;
// everything the pty showed, once it closed.
std::string stderr_on_a_terminal(std::vector<std::string> args, int& status) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return "no pty";
  const std::string slave_name = ::ptsname(master);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(master);
    const int slave = ::open(slave_name.c_str(), O_RDWR | O_NOCTTY);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(slave, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + patience(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{master, POLLIN, 0};
    if (::poll(&pfd, 1, 50) <= 0) {
      if (::waitpid(pid, &status, WNOHANG) == pid) break;
      continue;
    }
    char buffer[4096];
    const ssize_t n = ::read(master, buffer, sizeof(buffer));
    if (n <= 0) break;  // EIO: the slave side closed
    seen.append(buffer, static_cast<size_t>(n));
  }
  if (::waitpid(pid, &status, WNOHANG) == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ::close(master);
  return seen;
}

TEST(AttachStatus, ATerminalSeesHitsWhileTheTraceGoesToAFile) {
  TempDir dir;
  LiveProcess busy({program("busy_loop_O2"), "1", "60"}, dir.file("out"), dir.file("err"));
  ASSERT_TRUE(busy.wait_for_output("busy_loop: ready", patience()));
  int status = -1;
  const std::string pid = std::to_string(busy.pid());
  const std::string seen =
      stderr_on_a_terminal({DPROBE_BINARY, "attach", "-p", pid, "--duration", "2.5", "-o",
                            dir.file("trace"), "-e", "p:g/tick libc.so.6:clock_gettime"},
                           status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << seen;
  EXPECT_THAT(seen, HasSubstr("dprobe: tracing 1 probe in pid " + pid + ", ")) << seen;
  EXPECT_THAT(seen, HasSubstr(" hits, Ctrl-C to end")) << seen;
  // Erased at the end: the last thing on the terminal is the erase.
  const size_t last_status = seen.rfind("dprobe: tracing");
  ASSERT_NE(last_status, std::string::npos);
  EXPECT_THAT(seen.substr(last_status), HasSubstr("\r\x1b[K")) << seen;
  EXPECT_FALSE(read_file(dir.file("trace")).empty()) << "the trace went to its file";
}

TEST(AttachStatus, NoStatusWhereStderrIsNoTerminal) {
  TempDir dir;
  LiveProcess busy({program("busy_loop_O2"), "1", "60"}, dir.file("out"), dir.file("err"));
  ASSERT_TRUE(busy.wait_for_output("busy_loop: ready", patience()));
  const RunResult run =
      run_dprobe({"attach", "-p", std::to_string(busy.pid()), "--duration", "1.5", "-o",
                  dir.file("trace"), "-e", "p:g/tick libc.so.6:clock_gettime"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("tracing 1 probe"))) << run;
}

// The program makes 1001 getppid system calls, then exits once.
const std::vector<std::string> kProfiled = {"--profile", "-e", "p:g/rare libc.so.6:exit", "-e",
                                            "syscalls:sys_enter_getppid"};

TEST(ProfileOnATerminal, IsHeadedAndSortedByHits) {
  std::vector<std::string> args{DPROBE_BINARY, "run"};
  args.insert(args.end(), kProfiled.begin(), kProfiled.end());
  for (const char* arg : {"-o", "/dev/null", "--"}) args.emplace_back(arg);
  args.push_back(program("syscall_calls_O2"));
  args.emplace_back("getppid");
  args.emplace_back("1000");
  int status = -1;
  const std::string seen = stderr_on_a_terminal(args, status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << seen;
  const size_t header = seen.find("  EVENT ");
  const size_t often = seen.find("  sys_enter_getppid ");
  const size_t rare = seen.find("  rare ");
  ASSERT_NE(header, std::string::npos) << seen;
  ASSERT_NE(often, std::string::npos) << seen;
  ASSERT_NE(rare, std::string::npos) << seen;
  EXPECT_LT(header, often) << seen;
  EXPECT_LT(often, rare) << "most hits first: " << seen;
  EXPECT_THAT(seen, HasSubstr(" HITS          MISSES")) << seen;
}

TEST(ProfileOnATerminal, AScriptGetsTheKernelsLayout) {
  std::vector<std::string> options = kProfiled;
  for (const char* arg : {"-o", "/dev/null"}) options.emplace_back(arg);
  const RunResult run = run_traced({}, {program("syscall_calls_O2"), "getppid", "1000"}, options);
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("EVENT"))) << run;
  const size_t often = run.err.find("  sys_enter_getppid ");
  const size_t rare = run.err.find("  rare ");
  ASSERT_NE(often, std::string::npos) << run;
  EXPECT_LT(rare, often) << "in the order of the definitions: " << run;
}

}  // namespace
}  // namespace dprobe::integration
