// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach` holds the program's threads stopped while the agent
// arms (protocol::MessageType::kHoldThreads), so that none reaches a
// breakpoint before it becomes a jump: one reached with every signal
// blocked (a thread's exit, posix_spawn's child) would kill the process.
// The session's serving thread asks; ptrace obeys only the thread that
// traces, which is waiting for the agent's load call meanwhile: it does
// the holding and the letting go between its waits (TracedProcess::call's
// `between`). Threads are let go after a few seconds whatever happens: an
// agent kept from arming by a lock a held thread holds then goes on, as
// it would have with them running (the census is made for that).
//
//   ThreadHold hold(process);
//   options.hold_threads = [&](auto& running) { return hold.hold(running); };
//   options.release_threads = [&] { hold.release(); };
//   process.call(dlopen, {hook, RTLD_NOW}, timeout, [&] { hold.serve(); });
#ifndef DPROBE_CLI_PROCESS_THREAD_HOLD_H_
#define DPROBE_CLI_PROCESS_THREAD_HOLD_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cli/process/traced_process.h"

namespace dprobe::cli {

class ThreadHold {
 public:
  explicit ThreadHold(TracedProcess& process) : process_(process) {}

  // Serving thread: stop every thread but `running`; true once they are.
  bool hold(const std::vector<uint32_t>& running);
  // Serving thread: let them go, and wait (a while) until they are.
  void release();
  // Tracing thread: what was asked, done.
  void serve();
  // Tracing thread, once the call is over: whatever is held goes.
  void end();

 private:
  enum class State { kIdle, kHoldAsked, kHeld, kRefused, kReleaseAsked };

  TracedProcess& process_;
  std::mutex mutex_;
  std::condition_variable changed_;
  State state_ = State::kIdle;
  std::vector<uint32_t> running_;
  std::chrono::steady_clock::time_point held_since_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_THREAD_HOLD_H_
