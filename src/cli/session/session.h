// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One tracing session with one process, from the CLI's side of the control
// channel: hello, probe placement, the agent's arm report, the shared trace
// memory, then Go. Every error is reported (with the definition and a caret
// when it is a probe's) before open() returns the exit status to use.
//
//   auto session = Session::open(server, pid, set, exe, options, std::cerr);
//   if (!session) return session.error();   // an exit status
//   TraceReader reader(session->memory(), session->events(), &session->symbolizer(), ...);
//   session->go();
#ifndef DPROBE_CLI_SESSION_SESSION_H_
#define DPROBE_CLI_SESSION_SESSION_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "cli/output/process_symbolizer.h"
#include "cli/plan/probe_plan.h"
#include "cli/plan/target_resolver.h"
#include "cli/process/control_server.h"
#include "lang/definition_set.h"
#include "protocol/messages.h"
#include "trace/shared_memory.h"
#include "trace/trace_memory.h"

namespace dprobe::cli {

class TracedProcess;

struct SessionOptions {
  uint64_t ring_bytes = 1u << 20;
  uint32_t max_threads = 256;
  // `run`: a program whose probes were refused is killed before it runs a
  // single instruction of its own. `attach` leaves a running one alone.
  bool kill_on_abort = true;
  // Say which probes wait for an object not loaded yet (once per trace).
  bool report_pending = true;
  // Jump-optimize probes where safe (--no-optimize: breakpoints only).
  bool optimize = true;
  // --probes: list each placed probe and how it is armed, on stderr.
  bool list_probes = false;
  // --summary: the agent counts every system call (calls, errors, time).
  bool syscall_summary = false;
  // Return records carry their entry's time even without $duration: the
  // trace file (`record`) and --perfetto draw calls as slices with it.
  bool entry_times = false;
  // `attach`: where the thread that loads the agent goes back to
  // (protocol::Probes::caller_places).
  std::vector<uint64_t> caller_places;
  // `attach`: holds the program's threads but the agent's `running` ones
  // (MessageType::kHoldThreads), true if it did; and lets them go again,
  // once the arm report is in. Neither given: the agent is told it cannot.
  std::function<bool(const std::vector<uint32_t>& running)> hold_threads;
  std::function<void()> release_threads;
  // `run`: the process whose exit waits until the trace is written
  // (protocol::Probes::hold_exit), and an eventfd its session adds 1 to
  // when it begins to exit (Session::exiting); 0 and -1 for none.
  pid_t hold_exit_of = 0;
  int exit_notice = -1;
};

class Session {
 public:
  static Result<Session, int> open(ControlServer& server, pid_t pid, const lang::DefinitionSet& set,
                                   const std::string& executable, const SessionOptions& options,
                                   std::ostream& errors);
  // The same, with the process's connection already accepted.
  static Result<Session, int> open_connected(int socket, pid_t pid, const lang::DefinitionSet& set,
                                             const std::string& executable,
                                             const SessionOptions& options, std::ostream& errors);
  Session(Session&&) noexcept;
  Session& operator=(Session&&) = delete;
  ~Session();

  pid_t pid() const { return pid_; }
  // Its pid as its own PID namespace says it (the agent's getpid).
  uint32_t own_pid() const { return hello_.pid; }
  // go() was called: the program runs.
  bool going() const { return control_.joinable(); }
  // The agent's end closed: the process exited or exec'd, or let go.
  bool ended() const { return ended_.load(); }
  // The process is exiting and waits for let_exit() (SessionOptions::hold_exit_of).
  bool exiting() const { return exiting_.load(); }
  const trace::TraceMemory& memory() const { return *memory_; }
  const std::vector<trace::EventDesc>& events() const { return events_; }
  const trace::Symbolizer& symbolizer() const { return *symbolizer_; }
  // The definitions (indices into the set) whose object has not been
  // loaded in the process so far: placed when it is.
  std::vector<size_t> pending() const;

  // Lets the program run, probes armed; from then on a thread serves the
  // agent (objects loaded later get their pending probes).
  Result<void> go();
  // attach: the thread borrowed to load the agent runs the program again.
  Result<void> resumed();
  // The process that waits at its exit goes on exiting.
  Result<void> let_exit();
  // Asks the agent to disarm everything and waits for it to say so.
  Result<void> detach(std::chrono::milliseconds timeout);

 private:
  explicit Session(const std::string& executable);
  int exchange(pid_t pid, const lang::DefinitionSet& set, const SessionOptions& options,
               std::ostream& errors);
  int arm(const lang::DefinitionSet& set, std::vector<protocol::ProbeRequest> requests,
          const SessionOptions& options, std::ostream& errors);
  void abort(int status);
  // The arm report, holding the program's threads meanwhile if the agent
  // asks; its trace memory's descriptor in `fd`.
  Result<protocol::ArmReport> receive_arm_report(const SessionOptions& options, int& fd);
  // Every message to the agent goes through here: the serving thread
  // answers the loader's questions while this one says Resumed or Detach,
  // and a message's header and payload must not interleave with another's.
  Result<void> send(protocol::MessageType type, std::span<const std::byte> payload);
  void serve();
  std::unique_ptr<TracedProcess> hold_for_detach(std::span<const std::byte> payload);
  bool message_within(std::chrono::steady_clock::time_point deadline) const;
  // The answer to kHoldThreads: whether the threads are held.
  Result<void> answer_hold(bool held);
  void objects_changed(const protocol::ObjectsChanged& changed);
  void report_failures(const protocol::ArmReport& report);
  void list_probes(const protocol::ArmReport& report);
  std::string implementation_place(uint64_t address) const;
  void placed(const std::vector<protocol::ProbeRequest>& requests);

  int socket_ = -1;
  pid_t pid_ = 0;
  bool kill_on_abort_ = true;
  bool holds_threads_ = false;  // attach: the agent may ask for the threads to be held
  std::unique_ptr<TargetResolver> resolver_;
  protocol::Hello hello_;
  std::unique_ptr<ProcessObjects> objects_;
  std::unique_ptr<ProcessSymbolizer> symbolizer_;
  std::unique_ptr<trace::SharedMemory> shm_;
  std::optional<trace::TraceMemory> memory_;
  std::vector<trace::EventDesc> events_;
  const lang::DefinitionSet* set_ = nullptr;
  std::ostream* errors_ = nullptr;
  bool list_probes_ = false;
  std::thread control_;
  std::mutex send_mutex_;
  std::mutex detach_mutex_;
  std::condition_variable detached_cv_;
  bool detached_ = false;
  std::atomic<bool> ended_{false};
  std::atomic<bool> exiting_{false};
  int exit_notice_ = -1;
  mutable std::mutex pending_mutex_;  // the serving thread places them
  std::vector<size_t> pending_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_SESSION_SESSION_H_
