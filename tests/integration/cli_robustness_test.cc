// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The CLI's boundaries, end to end: its runtime directory as root, trace
// memory the program scribbles over, exit statuses and signals, the output
// (a full disk, a reader that goes away, descriptors the program must not
// inherit), and input errors, each a clear message and never a crash.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr const char* kMarker = "p:cli/marker marker code=%di:s32";

std::string robust_program() { return program("cli_robustness_O2"); }

// dprobe run with the marker probe, its raw wait status and outputs:
// stdin /dev/null, stdout to `out_fd` when given (else a file), stderr a
// file.
struct RawRun {
  int wait_status = -1;
  std::string out;
  std::string err;
};

RawRun run_raw(const std::vector<std::string>& args, int out_fd = -1,
               const std::function<void()>& while_running = nullptr) {
  RawRun run;
  TempDir dir;
  const std::string out_path = dir.file("out");
  const std::string err_path = dir.file("err");
  std::vector<std::string> storage{DPROBE_BINARY};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = out_fd >= 0 ? out_fd : ::open(out_path.c_str(), O_WRONLY | O_CREAT, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT, 0600);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (while_running) while_running();
  const auto deadline = std::chrono::steady_clock::now() + run_time_limit();
  while (::waitpid(pid, &run.wait_status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &run.wait_status, 0);
      ADD_FAILURE() << "dprobe hung";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // dprobe's collector, beside the program, may still be writing.
  if (!support::eventually([&] { return !support::group_alive(pid); }, run_time_limit())) {
    ADD_FAILURE() << "dprobe's collector hung";
    ::kill(-pid, SIGKILL);
  }
  run.out = read_file(out_path);
  run.err = read_file(err_path);
  return run;
}

// ---- 1. The runtime directory ---------------------------------------------------

// As root with a user's XDG_RUNTIME_DIR (su without -, sudo -E): that
// directory is the user's to swap, so dprobe must not put its socket there.
TEST(CliRuntimeDir, RootDoesNotUseAnotherUsersRuntimeDir) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  TempDir dir;
  const std::string users = dir.file("run-user");
  ASSERT_EQ(::mkdir(users.c_str(), 0700), 0);
  ASSERT_EQ(::chown(users.c_str(), 65534, 65534), 0);  // nobody
  const char* before = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("XDG_RUNTIME_DIR", users.c_str(), 1);
  // While the program runs, its session directory exists: where is it?
  std::vector<std::string> in_users;
  std::vector<std::string> in_own;
  const RawRun run =
      run_raw({"run", "-e", kMarker, "--", robust_program(), "calls", "700", "0"}, -1, [&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(350));
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(users, ec)) {
          in_users.push_back(entry.path().string());
        }
        for (const auto& entry : std::filesystem::directory_iterator("/tmp/dprobe-0", ec)) {
          in_own.push_back(entry.path().string());
        }
      });
  if (before != nullptr) {
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_RUNTIME_DIR");
  }
  ASSERT_TRUE(WIFEXITED(run.wait_status) && WEXITSTATUS(run.wait_status) == 0) << run.err;
  EXPECT_TRUE(in_users.empty()) << "dprobe wrote into uid 65534's directory: " << in_users[0];
  EXPECT_FALSE(in_own.empty()) << "no session directory in /tmp/dprobe-0";
  struct stat own {};
  ASSERT_EQ(::lstat("/tmp/dprobe-0", &own), 0);
  EXPECT_EQ(own.st_uid, 0u);
  EXPECT_EQ(own.st_mode & 0777, 0700u);
}

// ---- 2. Trace memory the program scribbles over ------------------------------------

TEST(CliTraceMemory, ScribbledTraceMemoryLeavesDprobeAliveAndTheStatusPassedThrough) {
  const RunResult run = run_traced({kMarker}, {robust_program(), "scribble", "1500", "5"});
  EXPECT_FALSE(run.timed_out) << run;
  EXPECT_EQ(run.status, 5) << "the program's status, dprobe alive: " << run;
  EXPECT_THAT(run.out, HasSubstr("scribbled")) << run;
  EXPECT_THAT(run.err, HasSubstr("dprobe: warning:")) << "the corruption is reported: " << run;
  // Said once per ring, not once per drain pass.
  size_t warnings = 0;
  for (size_t at = run.err.find("warning:"); at != std::string::npos;
       at = run.err.find("warning:", at + 1)) {
    ++warnings;
  }
  EXPECT_LE(warnings, 12u) << run;
}

// ---- 3. Exit status and signals ----------------------------------------------------

// The raw wait status of `args` run untraced.
int untraced_wait_status(const std::vector<std::string>& args) {
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// Its parent sees the program's own death: the same signal, and a core
// file exactly when the program untraced leaves one.
TEST(CliSignals, ProgramKilledBySignalIsSeenKilledBySameSignal) {
  for (const auto& [mode, arg, sig] : std::vector<std::tuple<std::string, std::string, int>>{
           {"segv", "0", SIGSEGV}, {"kill", "15", SIGTERM}, {"kill", "9", SIGKILL}}) {
    const RawRun run =
        run_raw({"run", "-e", "p:st/m marker", "--", program("status_O2"), mode, arg});
    ASSERT_TRUE(WIFSIGNALED(run.wait_status))
        << mode << " " << arg << ": exited " << WEXITSTATUS(run.wait_status) << "\n"
        << run.err;
    EXPECT_EQ(WTERMSIG(run.wait_status), sig) << run.err;
    const int untraced = untraced_wait_status({program("status_O2"), mode, arg});
    EXPECT_EQ(WCOREDUMP(run.wait_status), WCOREDUMP(untraced)) << mode;
    EXPECT_THAT(run.out, HasSubstr(": m: (marker")) << "the whole trace is written: " << run.out;
  }
}

TEST(CliSignals, ExitStatusPassesThrough) {
  const RawRun run =
      run_raw({"run", "-e", "p:st/m marker", "--", program("status_O2"), "exit", "42"});
  ASSERT_TRUE(WIFEXITED(run.wait_status));
  EXPECT_EQ(WEXITSTATUS(run.wait_status), 42) << run.err;
}

// One Ctrl-C at a terminal: the terminal sends SIGINT to the whole
// foreground process group, the program included; dprobe must not send it
// a second one.
TEST(CliSignals, CtrlCAtTheTerminalReachesTheProgramOnce) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const std::string slave_name = ::ptsname(master);
  std::vector<std::string> storage{DPROBE_BINARY,    "run",    "-e",  kMarker, "--",
                                   robust_program(), "sigint", "1500"};
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(master);
    ::setsid();
    const int slave = ::open(slave_name.c_str(), O_RDWR);  // the controlling terminal
    ::ioctl(slave, TIOCSCTTY, 0);
    ::dup2(slave, 0);
    ::dup2(slave, 1);
    ::dup2(slave, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  std::string seen;
  bool sent = false;
  const auto deadline = std::chrono::steady_clock::now() + patience(3);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{master, POLLIN, 0};
    if (::poll(&pfd, 1, 50) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(master, buffer, sizeof(buffer));
    if (n <= 0) break;  // EIO: every end of the terminal closed
    seen.append(buffer, static_cast<size_t>(n));
    if (!sent && seen.find("ready") != std::string::npos) {
      const char ctrl_c = 0x03;  // VINTR
      ASSERT_EQ(::write(master, &ctrl_c, 1), 1);
      sent = true;
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  ASSERT_TRUE(sent) << seen;
  EXPECT_THAT(seen, HasSubstr("sigint=1")) << seen;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << seen;
}

// ---- 4. Output --------------------------------------------------------------------

// The exit status is the program's own (the process is the program's): the
// error says the trace is incomplete.
TEST(CliOutput, FullDiskIsAnErrorAndTheProgramsStatusStands) {
  const RunResult run =
      run_traced({kMarker}, {robust_program(), "calls", "100", "0"}, {"-o", "/dev/full"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, HasSubstr("dprobe: error: /dev/full: No space left on device")) << run;
  EXPECT_THAT(run.err, HasSubstr("calls: done")) << "the program ran to its end: " << run;
}

TEST(CliOutput, FullDiskKeepsTheProgramsFailureStatus) {
  const RunResult run =
      run_traced({kMarker}, {robust_program(), "calls", "100", "3"}, {"-o", "/dev/full"});
  EXPECT_EQ(run.status, 3) << run;
  EXPECT_THAT(run.err, HasSubstr("No space left on device")) << run;
}

// dprobe run ... | head -1: the reader goes after one line; dprobe lives,
// the program runs to its end, and its status is dprobe's.
TEST(CliOutput, ReaderThatGoesAwayEndsTheTraceNotDprobe) {
  int pipe_fds[2];  // close-on-exec: dprobe holds only its stdout end
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  const RawRun run = run_raw({"run", "-e", kMarker, "--", robust_program(), "calls", "800", "7"},
                             pipe_fds[1], [&] {
                               ::close(pipe_fds[1]);
                               char c = 0;
                               while (::read(pipe_fds[0], &c, 1) == 1 && c != '\n') {
                               }
                               ::close(pipe_fds[0]);  // as head -1 does
                             });
  ASSERT_TRUE(WIFEXITED(run.wait_status))
      << "killed by signal " << WTERMSIG(run.wait_status) << "\n"
      << run.err;
  EXPECT_EQ(WEXITSTATUS(run.wait_status), 7) << run.err;
  EXPECT_THAT(run.err, HasSubstr("calls: done")) << run.err;
  EXPECT_THAT(run.err, Not(HasSubstr("error"))) << run.err;
}

// dprobe's own descriptors (its -o file, its socket) are not the program's.
TEST(CliOutput, ProgramInheritsNoneOfDprobesDescriptors) {
  TempDir dir;
  const std::string trace_file = dir.file("trace.txt");
  const RunResult run = run_traced({kMarker}, {robust_program(), "fds"}, {"-o", trace_file});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("fd 0 /dev/null")) << run;
  EXPECT_THAT(run.out, Not(HasSubstr(trace_file))) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("/tmp/dprobe-0/")))
      << "nothing of the session directory: " << run;
}

TEST(CliOutput, ProgramGetsTheDefaultSigpipe) {
  // dprobe ignores SIGPIPE; the program must not inherit that: writing to
  // a closed pipe kills it as it would untraced.
  TempDir dir;
  const std::string script = dir.file("pipe.sh");
  write_file(script, "#!/bin/sh\ngrep SigIgn /proc/self/status\n");
  ::chmod(script.c_str(), 0755);
  const RunResult traced = run_traced({"p:l/w libc.so.6:write"}, {"/bin/sh", script});
  const RunResult plain = run_program({"/bin/sh", script});
  ASSERT_EQ(traced.status, 0) << traced;
  // SigIgn's mask: bit SIGPIPE - 1 is set when it is ignored.
  const auto sigpipe_ignored = [](const std::string& out) {
    const size_t at = out.find("SigIgn:");
    if (at == std::string::npos) return -1;
    const uint64_t mask = std::stoull(out.substr(at + 7), nullptr, 16);
    return static_cast<int>((mask >> (SIGPIPE - 1)) & 1);
  };
  EXPECT_EQ(sigpipe_ignored(traced.out), 0) << traced;
  EXPECT_EQ(sigpipe_ignored(traced.out), sigpipe_ignored(plain.out)) << traced;
}

// ---- 5. Input errors ---------------------------------------------------------------

TEST(CliInput, HugeNumbersAreUsageErrors) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"run", "--buffer-size", "99999999999999999999", "-e", kMarker, "--", "/bin/true"},
           {"run", "--buffer-size", "18446744073709551617K", "-e", kMarker, "--", "/bin/true"},
           {"run", "--max-threads", "99999999999999999999", "-e", kMarker, "--", "/bin/true"},
           {"run", "--max-threads", "0", "-e", kMarker, "--", "/bin/true"},
           {"attach", "-p", "99999999999999999999", "-e", kMarker},
           {"attach", "-p", "1", "--duration=-1", "-e", kMarker},
           {"attach", "-p", "1", "--duration", "nan", "-e", kMarker},
           {"attach", "-p", "1", "--duration", "inf", "-e", kMarker},
           {"attach", "-p", "1", "--duration", "1e999", "-e", kMarker},
           {"attach", "-p", "1", "--buffer-size", "99999999999999999999", "-e", kMarker}}) {
    const RunResult run = run_dprobe(args);
    EXPECT_EQ(run.status, 2) << args[1] << " " << args[2] << " " << args[3] << ": " << run;
    EXPECT_THAT(run.err, StartsWith("dprobe: error: ")) << run;
    EXPECT_THAT(run.err, Not(HasSubstr("terminate"))) << run;
  }
}

TEST(CliInput, EndlessDefinitionFileIsAnError) {
  const RunResult run = run_dprobe({"run", "-f", "/dev/zero", "--", "/bin/true"});
  EXPECT_FALSE(run.timed_out);
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("/dev/zero: more than")) << run;
}

TEST(CliInput, ControlCharactersInABadDefinitionAreShownNotSent) {
  const RunResult run =
      run_dprobe({"check", "-x", robust_program(), "-e", "p:g/e \x1b]0;owned\x07nosuch"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_EQ(run.err.find('\x1b'), std::string::npos) << run;
  EXPECT_EQ(run.err.find('\x07'), std::string::npos) << run;
  EXPECT_THAT(run.err, HasSubstr("\\x1b]0;owned\\x07nosuch")) << run;
}

TEST(CliInput, ScriptRunsUnderItsInterpreter) {
  TempDir dir;
  const std::string script = dir.file("script.sh");
  write_file(script, "#!/bin/sh -e\necho \"script ran: $*\"\nexit 4\n");
  ::chmod(script.c_str(), 0755);
  const RunResult run = run_traced({"p:sh/w libc.so.6:write"}, {script, "a", "b"});
  EXPECT_EQ(run.status, 4) << run;
  EXPECT_THAT(run.out, HasSubstr("script ran: a b")) << run;
  EXPECT_FALSE(lines_of(parse_trace(run.out), "w").empty()) << run;
}

// Threads alive together, more than the rings: those without one lose their
// events (a thread that has exited gives its ring up, so they must overlap).
TEST(CliInput, ThreadSlotLimitNamesItsOption) {
  const RunResult run = run_traced({"p:t/w work"}, {program("ret_threads_O2"), "crowd"},
                                   {"--max-threads", "1", "-o", "/dev/null"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, HasSubstr("--max-threads")) << run;
  EXPECT_THAT(run.err, Not(HasSubstr("--buffer-size"))) << run;
}

}  // namespace
}  // namespace dprobe::integration
