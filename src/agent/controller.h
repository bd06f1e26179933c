// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's side of the control channel once the program runs: one
// thread of the agent's own reads every message the CLI sends. It hands
// the answers to the loader hook's questions over, disarms everything on
// Detach, and when the CLI goes away (killed, crashed) it disarms
// everything at once and lets the program run on, untraced.
//
//   Controller::instance().start(socket);        // after Go
//   auto probes = Controller::instance().ask(objects_changed);   // loader hook
#ifndef DPROBE_AGENT_CONTROLLER_H_
#define DPROBE_AGENT_CONTROLLER_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "arch/runtime/agent_descriptors.h"
#include "protocol/messages.h"

namespace dprobe::agent {

class Controller {
 public:
  static Controller& instance();
  // In a forked child: the parent's controller (its socket, and locks its
  // other threads may have held) is left behind for a fresh one.
  static void forget_after_fork();

  // What the reading thread does first, on the socket, before it reads:
  // false ends the session there (the socket is closed, nothing is read).
  using FirstJob = std::function<bool(arch::AgentDescriptor& socket)>;

  // Starts the reading thread on the connected socket (the agent's own
  // descriptor, high and registered). On failure the socket is closed.
  // With a first job, the caller waits for it, parked (thread_census.h):
  // every signal blocked, in a futex wait, so that none of the program's
  // code runs on it meanwhile; then returns what the job did.
  bool start(std::unique_ptr<arch::AgentDescriptor> socket, FirstJob first = {});
  // A session is on: the CLI is there.
  bool running() {
    std::lock_guard lock(mutex_);
    return socket_ && socket_->fd() >= 0 && !closed_;
  }

  // Tells the CLI which objects came and went, and waits (a while) for the
  // probes of the new ones. nullopt: no CLI, or no answer in time.
  std::optional<protocol::Probes> ask(const protocol::ObjectsChanged& changed);
  void send_report(const protocol::ArmReport& report);
  // The program is exiting (exit_hold.h): tells the CLI, and waits until it
  // says the trace is written (kExitGo) or goes away. At once if no
  // session is on.
  void wait_for_trace_at_exit();

 private:
  Controller() = default;
  static Controller*& current();
  void read_loop();
  // On the reading thread: the first job, if any; false if it failed.
  bool do_first_job();
  bool wait_parked_for_first_job();
  void let_go();
  void stop_asking();
  void disarm_for_detach(int socket);
  // The socket's number, if it still is the agent's: the program may have
  // closed it behind the interposers' back (a raw close_range) and put a
  // file of its own there. -1 then: the session is over.
  int checked_socket();

  std::unique_ptr<arch::AgentDescriptor> socket_;
  std::mutex mutex_;
  std::mutex send_mutex_;
  std::condition_variable answered_;
  std::optional<protocol::Probes> answer_;
  bool closed_ = false;
  bool detached_ = false;             // the CLI said Detach: nothing more is asked
  bool exit_let_go_ = false;          // the CLI said ExitGo
  std::atomic<bool> started_{false};  // its thread runs, known as the agent's
  FirstJob first_;
  // The first job's outcome, a futex word: 0 while it runs, then 1 or 2.
  std::atomic<uint32_t> first_done_{0};
};

// Disarms every probe and stops recording: the program goes on untraced.
void disarm_everything();

// The pid of the dprobe whose session is on in this process, 0 when none:
// `dprobe attach` reads it from outside (the agent's symbol, found through
// /proc/PID/maps) to refuse a second session before injecting anything.
void publish_session(int32_t tracer_pid);

}  // namespace dprobe::agent

extern "C" {
// What publish_session() writes; exported so that its address is in the
// agent's dynamic symbol table.
extern int32_t dprobe_session_tracer;
}

namespace dprobe::agent {}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_CONTROLLER_H_
