// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ostream>
#include <thread>

#include "cli/output/process_symbolizer.h"
#include "cli/output/progress.h"
#include "cli/output/terminal_text.h"
#include "cli/plan/probe_plan.h"
#include "cli/process/control_server.h"
#include "cli/process/executable.h"
#include "cli/process/launcher.h"
#include "cli/process/own_loads.h"
#include "cli/process/startup_syscalls.h"
#include "cli/session/session.h"
#include "cli/session/trace_loop.h"
#include "cli/session/trace_setup.h"
#include "cli/session/tracer.h"
#include "trace/shared_memory.h"

namespace dprobe::cli {
namespace {

constexpr int kExitNotRun = 127;

// What the start-up watch (startup_syscalls.h) could not see, said under
// the table.
std::string unseen_startup_calls(bool watched, bool follow) {
  if (!watched) {
    return "dprobe: not counted: the dynamic loader's system calls before the agent started "
           "(ptrace was refused; strace -f -c counts them)\n";
  }
  if (!follow) return "";
  return "dprobe: not counted: in processes the program started with exec, the dynamic "
         "loader's system calls before the agent started in them (strace -f -c counts them)\n";
}

bool has_syscall_events(const lang::DefinitionSet& set) {
  return std::any_of(set.specs().begin(), set.specs().end(), [](const trace::ProbeSpec& spec) {
    return trace::is_syscall_source(spec.event.source);
  });
}

// How many of `counts` (by number) the set's system call events name.
uint64_t calls_of_events(const std::vector<SyscallCount>& counts, const lang::DefinitionSet& set) {
  std::vector<bool> named(counts.size(), false);
  for (const trace::ProbeSpec& spec : set.specs()) {
    if (!trace::is_syscall_source(spec.event.source)) continue;
    const int32_t nr = spec.event.syscall_nr;
    if (nr < 0) named.assign(counts.size(), true);  // raw_syscalls: every call
    if (nr >= 0 && static_cast<size_t>(nr) < named.size()) named[static_cast<size_t>(nr)] = true;
  }
  uint64_t calls = 0;
  for (size_t nr = 0; nr < counts.size(); ++nr) {
    if (named[nr]) calls += counts[nr].calls;
  }
  return calls;
}

// The program's system calls before its agent started, in the table; the
// trace's events begin with the agent. Returns what to say of the calls
// that events name, said with the trace's other notes at its end.
std::string take_startup_calls(StartupSyscalls& startup, Tracer& tracer, bool summary,
                               std::ostream& errors) {
  if (startup.follow_to_agent() == StartupEnd::kLost) {
    errors << "dprobe: warning: the program's start-up calls were counted in part (ptrace "
              "lost it)\n";
  }
  if (summary) tracer.count_startup_syscalls(startup.counts());
  const uint64_t calls = calls_of_events(startup.counts(), tracer.first_set());
  if (calls == 0) return "";
  return "dprobe: not in the trace: " + std::to_string(calls) +
         " of the traced system calls, made by the dynamic loader before the agent started" +
         (summary ? " (the summary counts them)\n" : " (--summary counts them)\n");
}

std::atomic<bool> g_interrupted{false};

// The program receives the signals sent to it itself: the terminal's
// Ctrl-C, a supervisor's SIGTERM to the whole process group or cgroup
// reach the collector as well, which only stops waiting for followed
// processes then, and writes out what it has. kill -USR2 / -USR1 of the
// collector pause and resume every event.
void note_interruption(int) { g_interrupted = true; }

void catch_interruptions() {
  struct sigaction sa {};
  sa.sa_handler = note_interruption;
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);
  listen_for_pause_and_resume();
}

// The collector reads nothing: a pipe into the program must close when the
// program is done with it, not when the collector is.
void leave_stdin() {
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0) return;
  ::dup2(null, STDIN_FILENO);
  ::close(null);
}

// Until the program has ended, or waits at its exit for the trace to be
// written (SessionOptions::hold_exit_of).
void wait_for_program(int program_fd, int exit_notice) {
  pollfd ready[2] = {{program_fd, POLLIN, 0}, {exit_notice, POLLIN, 0}};
  while (::poll(ready, 2, -1) <= 0) {
  }
}

// The collector's part, once the program's process is the program's: the
// session, the trace to its end, what there is to say. The program's exit
// waits for this to return (the sessions close with it).
void collect(RunSplit& split, TraceSetup& trace, const RunOptions& options,
             const std::string& executable, Progress& progress, int exit_notice,
             StartupSyscalls* startup) {
  catch_interruptions();
  leave_stdin();
  std::ostream& errors = progress.stream();
  const bool summary = options.trace.session.syscall_summary;
  const std::string startup_note =
      startup != nullptr ? take_startup_calls(*startup, *trace.tracer, summary, errors) : "";
  if (!program_started(split)) return;  // the program said why
  // The program waits for its probes before its first instruction: none
  // of its children is missed.
  trace.watch_children(split.program, options.trace.follow);
  Tracer& tracer = *trace.tracer;
  progress.start("arming " + std::to_string(tracer.first_set().specs().size()) + " probes");
  auto session = Session::open(*trace.server, split.program, tracer.first_set(), executable,
                               options.trace.session, errors);
  progress.stop();
  if (!session) return;  // the agent ended the program, or it was killed
  tracer.adopt(std::make_unique<Session>(std::move(*session)), tracer.first_set());
  tracer.start(split.program);
  wait_for_program(split.program_fd, exit_notice);
  // Like strace -f: the trace ends when the last followed process does.
  // The program goes on exiting meanwhile: a child may wait for its end.
  if (options.trace.follow && !tracer.all_ended()) {
    tracer.let_exiting_go();
    while (!g_interrupted && !tracer.all_ended()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  (void)finish_trace(trace, options.trace, errors);
  // What the table cannot hold, said under it (docs/usage.md, "`run`").
  errors << startup_note;
  if (summary) errors << unseen_startup_calls(startup != nullptr, options.trace.follow);
}

// Before the split: whatever fails is dprobe's to report, with its status.
int trace_command(RunOptions options, std::ostream& terminal) {
  // Outlives everything that keeps the stream (the sessions).
  Progress progress(terminal);
  std::ostream& errors = progress.stream();
  if (options.command.empty()) {
    errors << "dprobe: error: no command to run (dprobe run [OPTIONS] -- CMD [ARGS])\n";
    return 2;
  }
  auto target = resolve_interpreter(find_executable(options.command[0]), options.command);
  if (!target) {
    errors << "dprobe: error: " << printable(target.error().message) << "\n";
    return kExitNotRun;
  }
  const std::string& executable = target->executable;
  if (auto traceable = check_traceable(executable); !traceable) {
    errors << "dprobe: error: " << printable(traceable.error().message) << "\n";
    return kExitNotRun;
  }
  // The process dprobe was started as becomes the program: its exit
  // waits for the trace.
  const int exit_notice = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (exit_notice < 0) {
    errors << "dprobe: error: eventfd: " << std::strerror(errno) << "\n";
    return kExitNotRun;
  }
  options.trace.session.hold_exit_of = ::getpid();
  options.trace.session.exit_notice = exit_notice;
  progress.start("reading the definitions");
  auto trace = set_up_trace(options.trace, executable, errors);
  progress.stop();
  if (!trace) return report(trace.error(), errors);
  // The program's calls before its agent starts are followed by ptrace.
  std::unique_ptr<StartupSyscalls> startup;
  const bool watch_startup =
      options.trace.session.syscall_summary || has_syscall_events(trace->tracer->first_set());
  auto split = split_for_run([&](pid_t program) {
    trace->server->claim_from_here();
    if (!watch_startup) return;
    auto watch = StartupSyscalls::seize(program, own_objects(agent_library_path(), executable));
    if (watch) startup = std::move(*watch);
  });
  if (!split) {
    errors << "dprobe: error: " << printable(split.error().message) << "\n";
    return kExitNotRun;
  }
  if (split->in_program()) {
    exec_program(*split, target->argv, executable, agent_library_path(),
                 trace->server->socket_path(), options.trace.follow);
  }
  collect(*split, *trace, options, executable, progress, exit_notice, startup.get());
  return 0;
}

}  // namespace

int run_run(const RunOptions& options, std::ostream& errors) {
  // In the collector, every file, socket and directory of the trace is
  // closed and removed by now, which lets the program's exit go on; its
  // own status is nobody's.
  return trace_command(options, errors);
}

}  // namespace dprobe::cli
