// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A running process held still with ptrace, to have it call functions of
// its own: how `dprobe attach` makes a process load the agent (dlopen) and
// start it. Every thread is stopped first, so nothing else of the process
// runs while the agent patches its code; the call runs on one of them,
// with its registers saved and given back exactly. Detaching lets every
// thread go on where it was.
//
//   auto process = TracedProcess::stop(pid);
//   auto path = process->push_string("/path/libdprobe_agent.so");
//   auto handle = process->call(dlopen_address, {*path, RTLD_NOW}, 10s);
//   process->detach();
#ifndef DPROBE_CLI_PROCESS_TRACED_PROCESS_H_
#define DPROBE_CLI_PROCESS_TRACED_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <string>

#include "arch/runtime/remote_regs.h"
#include "base/result.h"

namespace dprobe::cli {

class TracedProcess {
 public:
  // Seizes and stops every thread; on failure, says why in terms a user
  // can act on (permissions, ptrace restrictions).
  static Result<TracedProcess> stop(pid_t pid);
  // Seizes and stops every thread but those of `running`, only to hold
  // them still (no calls are made) until detach() lets them go.
  static Result<TracedProcess> hold(pid_t pid, const std::set<pid_t>& running);
  TracedProcess(TracedProcess&& other) noexcept;
  TracedProcess& operator=(TracedProcess&&) = delete;
  ~TracedProcess();

  // Copies a string below the calling thread's stack (beyond its red
  // zone); valid until the next push or call.
  Result<uint64_t> push_string(const std::string& text);
  // Calls function(args...) (integer arguments) on the process's main
  // thread (or, if it has exited, on another live one) and returns what it returns. A call that
  // does not return in time is taken back: the thread gets its registers again and goes on where it
  // was stopped.
  // `between`, if given, runs on this thread while the call runs, every
  // few hundred microseconds: what must be done with ptrace meanwhile
  // (hold_others) is done there, by the tracing thread.
  Result<uint64_t> call(uint64_t function, std::initializer_list<uint64_t> args,
                        std::chrono::milliseconds timeout,
                        const std::function<void()>& between = {});
  void detach();

  // Where the main thread is stopped: its pc, and whether in a system call.
  struct StopPoint {
    uint64_t pc;
    bool in_system_call;
  };
  Result<StopPoint> main_stop_point() const;
  Result<void> read(uint64_t address, void* out, size_t size) const;
  // Lets every thread but the main one run on, untraced: a call on the main
  // thread may need a lock one of them holds.
  void release_other_threads();
  // Stops every thread but the calling one (stopped already) and those of
  // `running`, new ones included until none is left; release_other_threads
  // lets them go again.
  Result<void> hold_others(const std::set<pid_t>& running);

  pid_t pid() const { return pid_; }
  // The thread the calls run on.
  pid_t caller() const { return caller_; }

 private:
  explicit TracedProcess(pid_t pid) : pid_(pid) {}
  // Seizes and stops `tid`: false if it is gone (or going), an error if it
  // cannot be traced.
  Result<bool> seize(pid_t tid);
  Result<void> wait_for_stop(pid_t tid);
  // PTRACE_DETACH, with the signal its stop held back, if any.
  void let_go(pid_t tid);
  void reissue_interrupted_syscall(pid_t tid);
  Result<void> take_back(const arch::RemoteRegs& regs);

  pid_t pid_;
  pid_t caller_ = 0;  // the thread that makes the calls: the main one, or a live one
  std::set<pid_t> threads_;
  std::map<pid_t, int> pending_signals_;  // of threads stopped by a signal (wait_for_stop)
  uint64_t scratch_ = 0;  // next free byte below the main thread's stack, growing down
  bool attached_ = false;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_TRACED_PROCESS_H_
