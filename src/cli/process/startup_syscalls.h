// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The program's system calls from its execve until the agent runs, seen as
// strace sees them (ptrace), so that `run --summary` counts what `strace -f
// -c` counts: the dynamic loader's calls and those of the constructors that
// run before the agent's. The collector seizes the program while it still
// waits to exec, follows its calls through the exec and the loader's work,
// and lets it go at the agent's first system call, its marker
// (protocol/startup_marker.h): from there the agent's own dispatch counts
// the program's calls, and the program is never ptraced again. The
// loader's calls that load dprobe's own objects are left out
// (own_loads.h).
//
//   auto watch = StartupSyscalls::seize(program, own_objects(agent, exe));  // before it execs
//   ... the program is let go to exec ...
//   StartupEnd end = watch->follow_to_agent();
//   tracer.count_startup_syscalls(watch->counts());
#ifndef DPROBE_CLI_PROCESS_STARTUP_SYSCALLS_H_
#define DPROBE_CLI_PROCESS_STARTUP_SYSCALLS_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "cli/output/syscall_summary.h"
#include "cli/process/own_loads.h"

namespace dprobe::cli {

enum class StartupEnd {
  kAgentStarted,  // the marker came: the program is let go, the agent counts on
  kEnded,         // the program ended (or its exec failed) before any agent ran
  kLost,          // ptrace failed on the way: the program is let go, counts are partial
};

class StartupSyscalls {
 public:
  // Seizes the program (which waits: it is not running its command yet).
  // Fails where ptrace is not allowed (a seccomp sandbox, Yama's admin-only
  // scope, a tracer already there); the program is then left as it was.
  static Result<std::unique_ptr<StartupSyscalls>> seize(pid_t program,
                                                        std::vector<std::string> own);

  ~StartupSyscalls();
  StartupSyscalls(const StartupSyscalls&) = delete;
  StartupSyscalls& operator=(const StartupSyscalls&) = delete;

  // Serves the program's stops until the agent's marker (or the program's
  // end), counting from its execve on; every thread is detached on return.
  StartupEnd follow_to_agent();

  // The calls counted, indexed by system call number (names left empty).
  const std::vector<SyscallCount>& counts() const { return counts_; }
  // The calls of dprobe's own loading that were left out.
  uint64_t own_calls() const { return own_calls_; }

 private:
  struct Pending {
    StartupCall call;
    bool own = false;
    std::chrono::steady_clock::time_point since;
  };

  explicit StartupSyscalls(std::vector<std::string> own) : own_(std::move(own)) {}
  bool on_syscall_stop(pid_t tid);
  void entered(pid_t tid, StartupCall call);
  void exited(pid_t tid, int64_t result);
  void detach_all(pid_t stopped);

  OwnLoads own_;
  bool counting_ = false;             // from the program's execve on
  std::map<pid_t, Pending> pending_;  // per thread: the call it is in
  std::vector<pid_t> threads_;
  std::vector<SyscallCount> counts_;
  uint64_t own_calls_ = 0;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_STARTUP_SYSCALLS_H_
