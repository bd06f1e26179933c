// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every process of one trace: the first (started by `run`, or attached),
// the same process again after it execs (a new program: the definitions
// that resolve there), and with --follow every child it starts. Each has a
// session, trace memory and reader of its own; one drain thread writes all
// their lines to one output, and the profile adds their counts up per
// event, as the kernel's uprobe_profile does across processes.
//
//   Tracer tracer(server, options, std::move(set), std::cerr);
//   tracer.adopt(std::move(first_session), tracer.first_set());
//   tracer.start(root_pid);      // drains; sessions of processes that come
//   ... wait for the program ...
//   tracer.finish();
//   tracer.print_profile(stdout);
#ifndef DPROBE_CLI_SESSION_TRACER_H_
#define DPROBE_CLI_SESSION_TRACER_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/output/hist_collector.h"
#include "cli/output/syscall_summary.h"
#include "cli/output/trace_reader.h"
#include "cli/plan/definitions.h"
#include "cli/process/control_server.h"
#include "cli/session/session.h"
#include "cli/session/trace_loop.h"

namespace dprobe::cli {

struct TraceOptions {
  DefinitionSources sources;  // `executable`: the first process's program
  SessionOptions session;
  OutputFormat format = OutputFormat::kText;
  std::FILE* out = stdout;
  std::vector<std::string> disabled;         // [GRP/]EVENT names, checked beforehand
  bool follow = false;                       // trace the children too
  std::string out_name = "standard output";  // for messages: -o OUT
  std::FILE* records = nullptr;              // --perfetto: the trace file's chunks too, here
};

// Events lost, by the limit that lost them.
struct LostCounts {
  uint64_t ring_full = 0;  // a ring was full: --buffer-size
  uint64_t no_slot = 0;    // every thread slot taken: --max-threads
  void add(const TraceReader& reader);
};

// What to tell the user about lost events: which limit, which option.
std::string lost_events_message(const LostCounts& lost, uint64_t ring_bytes, uint32_t max_threads);

class Tracer {
 public:
  Tracer(ControlServer& server, TraceOptions options, lang::DefinitionSet set,
         std::ostream& errors);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  const lang::DefinitionSet& first_set() const { return *first_set_; }

  // Reads a process's session from now on, and lets it go if it has not.
  void adopt(std::unique_ptr<Session> session, const lang::DefinitionSet& set);

  // Drains, and takes the sessions of processes that connect: `root` again
  // (after exec), and with `follow` any other.
  void start(pid_t root);

  // With --follow: whether every followed process has ended (or waits at
  // its exit for the trace: SessionOptions::hold_exit_of).
  bool all_ended();
  // The processes that wait at their exit go on exiting.
  void let_exiting_go();
  // Asks every live session's agent to disarm, and waits for each: false
  // (each said on the error stream) when one did not confirm in time. Its
  // agent still disarms when the CLI's end of the channel closes.
  [[nodiscard]] bool detach_all(std::chrono::milliseconds timeout);
  // Stops taking sessions and draining; writes out what is left, then the
  // warnings (lost events, corrupt rings).
  void finish();
  // After finish(): every traced process's system calls (--summary), by
  // number, summed over the processes.
  std::vector<SyscallCount> syscall_counts();
  // Adds calls seen before any agent ran (startup_syscalls.h), by number.
  void count_startup_syscalls(const std::vector<SyscallCount>& by_nr);
  // After finish(): every hist trigger's hist (--trigger), merged over the
  // processes, in the kernel's hist layout; empty if there is none.
  std::string hist_text();
  // After finish(): what to say of the program's own Syscall User Dispatch
  // requests refused while its calls were traced; empty if none.
  std::string dispatch_refused_message();
  // After finish(): the warnings it wrote, for a trace file's notes.
  const std::string& warnings() const { return warnings_; }
  // Each event's hits and misses, across every process: the kernel's
  // kprobe_profile layout, in the order of the definitions; `for_a_person`
  // (a terminal reads it) adds a header and puts the most hits first.
  void print_profile(std::FILE* out, bool for_a_person = false);
  // Every event's hits so far, across every process, as of the last pass
  // over the rings (a status line's: never waits for the drain).
  uint64_t hits_so_far() const;
  // After finish(): 0, or the errno of the write that made the trace stop
  // (EPIPE: its reader went away, as `dprobe run ... | head` does).
  int output_error() const { return output_error_; }
  // After finish(): 0, or the errno of a write of options.records.
  int records_error() const { return records_error_; }
  // After finish(): the events no process of the trace placed, their
  // object never loaded there, as GRP/EVENT and OBJ.
  struct Pending {
    std::string event;
    std::string object;
  };
  std::vector<Pending> stayed_pending() const;

 private:
  // One process. When its session has ended and its rings are read to the
  // end, only its counts stay (its trace memory is let go).
  // One event's line of the profile.
  struct EventCounts {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t filtered = 0;  // turned away by its filter (--filter): neither
  };
  struct Traced {
    std::unique_ptr<Session> session;
    const lang::DefinitionSet* set;
    std::unique_ptr<TraceReader> reader;
    std::unique_ptr<EventSwitch> events;
    std::vector<EventCounts> counts;  // per spec, once ended
    bool ended = false;
  };

  void drain_loop();
  void accept_loop(pid_t root);
  void take(const ControlServer::Connection& connection);
  const lang::DefinitionSet& set_for(const std::string& executable, pid_t pid);
  // `final`: every line read is written; else only those older than the
  // pass (less a margin for records still being written).
  size_t drain_pass(bool final = false);
  void let_go(Traced& traced);
  EventCounts count_of(const Traced& traced, size_t spec) const;
  static void add_syscall_stats(const trace::TraceMemory& memory,
                                std::vector<SyscallCount>& totals);
  void note_pending(const Traced& traced);

  ControlServer& server_;
  TraceOptions options_;
  std::ostream& errors_;
  const lang::DefinitionSet* first_set_;
  std::map<std::string, std::unique_ptr<lang::DefinitionSet>> sets_;  // by executable
  std::mutex mutex_;  // traced_ and the tracing switch
  std::vector<std::unique_ptr<Traced>> traced_;
  bool tracing_on_ = true;
  TracePass pass_;         // every process's lines of one drain, in time order
  TracePass record_pass_;  // with options_.records: their chunks
  LostCounts lost_;
  uint64_t sum_of_hits() const;
  std::atomic<uint64_t> hits_so_far_{0};
  std::vector<SyscallCount> syscall_totals_;  // by number: the processes that ended
  HistCollector hists_;                       // the processes that ended
  uint64_t dispatch_refused_ = 0;             // the same, for prctl's refused
  int output_error_ = 0;                      // written by the drainer under mutex_
  int records_error_ = 0;
  std::vector<std::string> problems_;
  std::string warnings_;
  std::map<std::string, std::string> pending_;  // GRP/EVENT -> OBJ, pending somewhere
  std::set<std::string> placed_;                // GRP/EVENT placed somewhere
  std::atomic<bool> stop_{false};
  std::thread drainer_;
  std::thread acceptor_;
};

// The program a process runs (/proc/PID/exe), empty if it is gone.
std::string executable_of(pid_t pid);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_SESSION_TRACER_H_
