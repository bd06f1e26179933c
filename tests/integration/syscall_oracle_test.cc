// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The kernel as the oracle of dprobe's system call events: one program
// (tests/programs/syscall_oracle.c, the same calls on every run, its
// pointers static and the program not PIE, so that they are equal too) is
// run once under the kernel's own syscalls and raw_syscalls events,
// enabled for its pid only, and once under `dprobe run` with the same
// events; from its first getppid on (main's first call: what the dynamic
// loader did before is not dprobe's to see), the two traces must agree
// event by event: name, argument values, return value. Timestamps and
// cpus are not compared; nor getppid's result, the parent: this test in
// one run, dprobe in the other (the kernel's is checked against it).
//
// The kernel's side runs in a tracefs instance of its own
// (instances/dprobe_oracle_PID), so nothing of the global trace, its
// buffer or its options changes; the instance is removed at the end, pass
// or fail. Needs root and tracefs with syscall events; otherwise skipped,
// with the reason.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/syscall_lines.h"

namespace dprobe::integration {
namespace {

const std::string kTracing = "/sys/kernel/tracing";
const std::string kOracle = program("syscall_oracle_O2");

// A tracefs instance, made at construction and removed (with its events
// turned off first: an instance with enabled events cannot be removed) at
// the end of scope.
class TracefsInstance {
 public:
  TracefsInstance() : path_(kTracing + "/instances/dprobe_oracle_" + std::to_string(::getpid())) {
    made_ = ::mkdir(path_.c_str(), 0755) == 0;
  }
  ~TracefsInstance() {
    if (!made_) return;
    set("tracing_on", "0");
    set("events/enable", "0");
    ::rmdir(path_.c_str());
  }
  TracefsInstance(const TracefsInstance&) = delete;
  TracefsInstance& operator=(const TracefsInstance&) = delete;

  bool made() const { return made_; }
  // Writes `value` to the instance's `file`: false when the kernel refused it.
  bool set(const std::string& file, const std::string& value) const {
    const int fd = ::open((path_ + "/" + file).c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return false;
    const bool written =
        ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
    ::close(fd);
    return written;
  }
  std::string trace() const { return read_file(path_ + "/trace"); }

 private:
  std::string path_;
  bool made_ = false;
};

// Why the kernel cannot be the oracle here; "" when it can.
std::string why_no_oracle() {
  if (::geteuid() != 0) return "needs root to use tracefs";
  if (!std::filesystem::exists(kTracing + "/instances")) {
    run_program({"/bin/mount", "-t", "tracefs", "nodev", kTracing});
  }
  if (!std::filesystem::exists(kTracing + "/instances")) return "no tracefs at " + kTracing;
  if (!std::filesystem::exists(kTracing + "/events/syscalls/sys_enter_getppid"))
    return "the kernel has no syscall events (CONFIG_FTRACE_SYSCALLS)";
  return {};
}

// The program's pid once its process has started and waits on `gate`:
// it execs the oracle program when a byte arrives. stdin and stdout are
// /dev/null, as dprobe's run of it has them (its stdout a file).
pid_t start_gated(int gate) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  char byte;
  if (::read(gate, &byte, 1) != 1) ::_exit(126);
  const int null = ::open("/dev/null", O_RDWR);
  ::dup2(null, STDIN_FILENO);
  ::dup2(null, STDOUT_FILENO);
  ::dup2(null, STDERR_FILENO);
  ::close(null);
  ::close(gate);
  ::execl(kOracle.c_str(), kOracle.c_str(), static_cast<char*>(nullptr));
  ::_exit(127);
}

// The kernel's trace of one run of the oracle program, its pid only; the
// program's exit status in `status`.
std::optional<std::string> kernel_trace(int& status) {
  TracefsInstance instance;
  if (!instance.made()) return std::nullopt;
  int gate[2];
  if (::pipe2(gate, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = start_gated(gate[0]);
  ::close(gate[0]);
  // Only its pid, none of its children, on from the moment it execs.
  const bool ready = instance.set("tracing_on", "0") && instance.set("options/event-fork", "0") &&
                     instance.set("set_event_pid", std::to_string(pid)) &&
                     instance.set("events/syscalls/enable", "1") &&
                     instance.set("events/raw_syscalls/enable", "1") && instance.set("trace", "") &&
                     instance.set("tracing_on", "1");
  if (!ready) ::kill(pid, SIGKILL);
  ::write(gate[1], "x", 1);
  ::close(gate[1]);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  instance.set("tracing_on", "0");
  if (!ready) return std::nullopt;
  return instance.trace();
}

// The lines from main's first call (getppid) on, of that call's thread:
// the per-call events (syscalls) or the raw ones (raw_syscalls).
std::vector<SyscallLine> from_main(const std::vector<SyscallLine>& lines, bool raw) {
  const auto mark = std::find_if(lines.begin(), lines.end(), [&](const SyscallLine& line) {
    return raw ? line.text.starts_with("sys_enter: NR 110 (") : line.text == "sys_getppid()";
  });
  std::vector<SyscallLine> out;
  for (auto it = mark; it != lines.end(); ++it) {
    if (it->tid == mark->tid && it->is_raw() == raw) out.push_back(*it);
  }
  return out;
}

uint64_t number(const std::string& text) { return std::strtoull(text.c_str(), nullptr, 0); }

// One line as the values it carries: "sys_openat(dfd=4294967196, ...)",
// "sys_openat -> 3", "sys_enter: NR 257", "sys_exit: NR 257 = 3"; getppid's
// result (the parent) as PARENT. Raw enter lines keep only the number: the
// registers a call does not use hold what the program left there.
std::string values_of(const SyscallLine& line) {
  if (line.is_raw()) {
    const std::string nr = "NR " + std::to_string(line.raw_nr());
    if (line.text.starts_with("sys_enter:")) return "sys_enter: " + nr;
    return "sys_exit: " + nr + " = " + (line.raw_nr() == 110 ? "PARENT" : line.raw_result());
  }
  if (line.is_exit()) {
    return "sys_" + line.name() + " -> " +
           (line.name() == "getppid" ? "PARENT" : std::to_string(number(line.result())));
  }
  std::string text = "sys_" + line.name() + "(";
  for (const auto& [name, value] : line.args()) {
    text += (text.ends_with("(") ? "" : ", ") + name + "=" + std::to_string(number(value));
  }
  return text + ")";
}

std::vector<std::string> values_of(const std::vector<SyscallLine>& lines) {
  std::vector<std::string> out;
  for (const SyscallLine& line : lines) out.push_back(values_of(line));
  return out;
}

// Both traces of the oracle program, made once for the whole suite.
struct Traces {
  std::string skip;  // why not, when not
  int kernel_status = -1;
  std::vector<SyscallLine> kernel;
  RunResult dprobe;
  std::vector<SyscallLine> traced;
};

const Traces& traces() {
  static const Traces both = [] {
    Traces made;
    made.skip = why_no_oracle();
    if (!made.skip.empty()) return made;
    const auto kernel = kernel_trace(made.kernel_status);
    if (!kernel) {
      made.skip = "cannot make and set up a tracefs instance under " + kTracing;
      return made;
    }
    made.kernel = parse_syscall_trace(*kernel);
    TempDir dir;
    made.dprobe =
        run_traced({"syscalls:*", "raw_syscalls:*"}, {kOracle}, {"-o", dir.file("trace")});
    made.traced = parse_syscall_trace(read_file(dir.file("trace")));
    return made;
  }();
  return both;
}

class SyscallOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!traces().skip.empty()) GTEST_SKIP() << traces().skip;
    ASSERT_EQ(traces().kernel_status, 0);
    ASSERT_EQ(traces().dprobe.status, 0) << traces().dprobe;
    ASSERT_EQ(traces().dprobe.out, "syscall_oracle: ok\n") << traces().dprobe;
  }
};

TEST_F(SyscallOracle, EveryCallHasTheKernelsNameArgumentsAndResult) {
  const auto kernel = from_main(traces().kernel, false);
  const auto traced = from_main(traces().traced, false);
  ASSERT_EQ(kernel.size(), 23u) << "the program's 12 calls, entered and returned (exit_group "
                                   "only entered): is the kernel's trace whole?";
  EXPECT_EQ(values_of(traced), values_of(kernel));
  // getppid's result is the parent: this test, in the kernel's run.
  EXPECT_EQ(kernel[1].text, "sys_getppid -> " + exit_value(::getpid()));
}

TEST_F(SyscallOracle, EveryRawEventHasTheKernelsNumberAndResult) {
  const auto kernel = from_main(traces().kernel, true);
  const auto traced = from_main(traces().traced, true);
  ASSERT_EQ(kernel.size(), 23u) << "is the kernel's trace whole?";
  EXPECT_EQ(values_of(traced), values_of(kernel));
}

// Byte for byte, the text after the timestamp: an argument below 10 in
// decimal ("sys_close(fd: 3)", "whence: 1"), the others in hex.
TEST_F(SyscallOracle, EveryLineHasTheKernelsText) {
  const auto kernel = from_main(traces().kernel, false);
  const auto traced = from_main(traces().traced, false);
  ASSERT_EQ(traced.size(), kernel.size());
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (kernel[i].name() == "getppid" && kernel[i].is_exit()) continue;  // the parent
    EXPECT_EQ(traced[i].text, kernel[i].text) << "line " << i;
  }
}

}  // namespace
}  // namespace dprobe::integration
