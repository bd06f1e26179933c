// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/startup_syscalls.h"

#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>

#include "protocol/startup_marker.h"

namespace dprobe::cli {
namespace {

constexpr long kOptions = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE;
constexpr int kSyscallStop = SIGTRAP | 0x80;  // PTRACE_O_TRACESYSGOOD
constexpr size_t kMaxPath = 4096;

long trace(int request, pid_t tid, uint64_t addr = 0, uint64_t data = 0) {
  return ::ptrace(static_cast<__ptrace_request>(request), tid, addr, data);
}

bool resume(pid_t tid, int sig = 0) {
  return trace(PTRACE_SYSCALL, tid, 0, static_cast<uint64_t>(sig)) == 0;
}

pid_t wait_for(pid_t tid, int& status) {
  pid_t got;
  do {
    got = ::waitpid(tid, &status, __WALL);
  } while (got < 0 && errno == EINTR);
  return got;
}

bool is_marker(const StartupCall& call) {
  return call.nr == SYS_prctl && call.args[0] == protocol::kStartupMarkerOption &&
         call.args[1] == protocol::kStartupMarkerMode &&
         call.args[2] == protocol::kStartupMarkerMagic;
}

bool is_exec(uint64_t nr) { return nr == SYS_execve || nr == SYS_execveat; }

// A NUL-terminated string of the stopped thread's, read a page at a time
// (a read may not cross into a page that is not mapped).
std::string read_string(pid_t tid, uint64_t address) {
  std::string text;
  while (text.size() < kMaxPath) {
    char chunk[256];
    const uint64_t to_page_end = 4096 - (address % 4096);
    const size_t want = std::min<uint64_t>(sizeof(chunk), to_page_end);
    iovec local{chunk, want};
    iovec remote{reinterpret_cast<void*>(address), want};
    const ssize_t got = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (got <= 0) break;
    const auto* end = static_cast<const char*>(std::memchr(chunk, '\0', static_cast<size_t>(got)));
    if (end != nullptr) return text.append(chunk, static_cast<size_t>(end - chunk));
    text.append(chunk, static_cast<size_t>(got));
    address += static_cast<uint64_t>(got);
  }
  return text;
}

bool is_group_stop(pid_t tid, int sig) {
  if (sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU) return false;
  siginfo_t info;
  // ptrace(2): PTRACE_GETSIGINFO fails with EINVAL only in a group-stop.
  return trace(PTRACE_GETSIGINFO, tid, 0, reinterpret_cast<uint64_t>(&info)) != 0 &&
         errno == EINVAL;
}

bool is_error(int64_t result) { return result < 0 && result >= -4095; }

}  // namespace

Result<std::unique_ptr<StartupSyscalls>> StartupSyscalls::seize(pid_t program,
                                                                std::vector<std::string> own) {
  if (trace(PTRACE_SEIZE, program, 0, kOptions) != 0) {
    return fail(std::string("ptrace: ") + std::strerror(errno));
  }
  // Stopped once, to be resumed stopping at every system call.
  int status = 0;
  if (trace(PTRACE_INTERRUPT, program) != 0 || wait_for(program, status) != program ||
      !WIFSTOPPED(status) || !resume(program)) {
    const int error = errno;
    trace(PTRACE_DETACH, program);
    return fail(std::string("ptrace: ") + std::strerror(error));
  }
  std::unique_ptr<StartupSyscalls> watch(new StartupSyscalls(std::move(own)));
  watch->threads_.push_back(program);
  return watch;
}

StartupSyscalls::~StartupSyscalls() = default;

StartupEnd StartupSyscalls::follow_to_agent() {
  for (;;) {
    int status = 0;
    const pid_t tid = wait_for(-1, status);
    if (tid < 0) return StartupEnd::kLost;  // no tracee left (ECHILD)
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      std::erase(threads_, tid);
      pending_.erase(tid);
      if (threads_.empty()) return StartupEnd::kEnded;
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    const bool known = std::find(threads_.begin(), threads_.end(), tid) != threads_.end();
    if (!known) threads_.push_back(tid);  // a new thread, attached by its clone
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    if (sig == kSyscallStop) {
      if (!on_syscall_stop(tid)) {
        detach_all(tid);
        return StartupEnd::kAgentStarted;
      }
      resume(tid);
    } else if (event == PTRACE_EVENT_STOP) {
      // A group-stop stays one (job control works as untraced); the
      // others are a new thread's first stop or an interrupt.
      if (known && is_group_stop(tid, sig)) {
        trace(PTRACE_LISTEN, tid);
      } else {
        resume(tid);
      }
    } else if (event != 0) {
      resume(tid);  // exec, clone: nothing to do
    } else {
      resume(tid, sig);  // a signal for the program, delivered as sent
    }
  }
}

bool StartupSyscalls::on_syscall_stop(pid_t tid) {
  __ptrace_syscall_info info{};
  if (trace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(info), reinterpret_cast<uint64_t>(&info)) <= 0) {
    return true;
  }
  if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
    exited(tid, info.exit.rval);
    return true;
  }
  if (info.op != PTRACE_SYSCALL_INFO_ENTRY) return true;
  StartupCall call;
  call.nr = info.entry.nr;
  std::copy(std::begin(info.entry.args), std::end(info.entry.args), call.args);
  if (is_marker(call)) return false;
  entered(tid, std::move(call));
  return true;
}

void StartupSyscalls::entered(pid_t tid, StartupCall call) {
  pending_.erase(tid);
  // The calls dprobe's launcher makes before the exec are not the program's.
  if (is_exec(call.nr)) counting_ = true;
  if (!counting_) return;
  if (call.nr == SYS_openat) call.path = read_string(tid, call.args[1]);
  Pending& pending = pending_[tid];
  pending.own = own_.is_own(call);
  pending.since = std::chrono::steady_clock::now();
  if (pending.own) ++own_calls_;
  pending.call = std::move(call);
}

void StartupSyscalls::exited(pid_t tid, int64_t result) {
  auto it = pending_.find(tid);
  if (it == pending_.end()) return;
  const Pending& pending = it->second;
  if (pending.own) {
    own_.made(pending.call, result);
  } else {
    // Counted when it returns, as strace -c counts (exit_group never does).
    if (counts_.size() <= pending.call.nr) counts_.resize(pending.call.nr + 1);
    SyscallCount& count = counts_[pending.call.nr];
    ++count.calls;
    if (is_error(result)) ++count.errors;
    count.total_ns += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::steady_clock::now() - pending.since)
                                                .count());
  }
  pending_.erase(it);
}

// The marker's thread is stopped; any other is stopped first. A signal
// that stopped one on its way is handed back with the detach.
void StartupSyscalls::detach_all(pid_t stopped) {
  trace(PTRACE_DETACH, stopped);
  for (pid_t tid : threads_) {
    if (tid == stopped || trace(PTRACE_INTERRUPT, tid) != 0) continue;
    int status = 0;
    if (wait_for(tid, status) != tid || !WIFSTOPPED(status)) continue;
    const bool signal_stop = (status >> 16) == 0 && WSTOPSIG(status) != kSyscallStop;
    trace(PTRACE_DETACH, tid, 0, signal_stop ? static_cast<uint64_t>(WSTOPSIG(status)) : 0);
  }
  threads_.clear();
}

}  // namespace dprobe::cli
