// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/run_command.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
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
#include "cli/session/session.h"
#include "cli/session/trace_loop.h"
#include "cli/session/trace_setup.h"
#include "cli/session/tracer.h"
#include "trace/shared_memory.h"

namespace dprobe::cli {
namespace {

constexpr int kExitNotRun = 127;
constexpr const char* kLoaderCallsUnseen =
    "dprobe: not counted: the dynamic loader's system calls before the agent "
    "started (mapping the libraries: strace -f -c counts them too)\n";
constexpr int kExitFailure = 1;

std::atomic<pid_t> g_child{0};
std::atomic<bool> g_interrupted{false};

// How the program ended: its exit code, or the signal that killed it.
struct Outcome {
  int status = 0;
  int signal = 0;
};

// The terminal sends Ctrl-C (SIGINT, SIGQUIT, a hangup) to its whole
// foreground process group, the program included: the kernel is then the
// sender (SI_KERNEL), and passing it on would deliver it twice. What a
// process sends to dprobe alone (kill PID) is passed on, and dprobe lives
// to write out the rest.
void forward_signal(int sig, siginfo_t* info, void*) {
  g_interrupted = true;
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, sig);
}

void forward_signals() {
  struct sigaction sa {};
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);
  listen_for_pause_and_resume();
}

Outcome outcome_of(int status) {
  if (WIFEXITED(status)) return {WEXITSTATUS(status), 0};
  if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
  return {kExitFailure, 0};
}

Outcome wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return {kExitFailure, 0};
  }
  return outcome_of(status);
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  wait_for(pid);
}

// The program was killed by `sig`: so is dprobe, once everything is
// written, for whoever waits for it (a shell prints "Segmentation fault",
// make stops). A core file would be dprobe's, not the program's: none.
[[noreturn]] void die_by(int sig) {
  std::fflush(stdout);
  std::fflush(stderr);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(sig, &dfl, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);  // a signal whose default is not to end the process
}

// The exit status when the trace could not be written: the program's if it
// failed, 1 otherwise; a reader that went away (EPIPE) is no failure.
int with_output_error(int status, int output_error) {
  if (output_error == 0 || output_error == EPIPE || status != 0) return status;
  return kExitFailure;
}

Outcome trace_command(const RunOptions& options, std::ostream& terminal) {
  // Outlives everything that keeps the stream (the sessions).
  Progress progress(terminal);
  std::ostream& errors = progress.stream();
  if (options.command.empty()) {
    errors << "dprobe: error: no command to run (dprobe run [OPTIONS] -- CMD [ARGS])\n";
    return {2, 0};
  }
  auto target = resolve_interpreter(find_executable(options.command[0]), options.command);
  if (!target) {
    errors << "dprobe: error: " << printable(target.error().message) << "\n";
    return {kExitNotRun, 0};
  }
  const std::string& executable = target->executable;
  if (auto traceable = check_traceable(executable); !traceable) {
    errors << "dprobe: error: " << printable(traceable.error().message) << "\n";
    return {kExitNotRun, 0};
  }
  progress.start("reading the definitions");
  auto trace = set_up_trace(options.trace, executable, errors);
  progress.stop();
  if (!trace) return {report(trace.error(), errors), 0};
  auto child = launch(target->argv, executable, agent_library_path(), trace->server->socket_path(),
                      options.trace.follow);
  if (!child) {
    errors << "dprobe: error: " << printable(child.error().message) << "\n";
    return {kExitNotRun, 0};
  }
  // The program waits for its probes before its first instruction: none
  // of its children is missed.
  trace->watch_children(*child, options.trace.follow);
  g_child = *child;
  forward_signals();

  Tracer& tracer = *trace->tracer;
  progress.start("arming " + std::to_string(tracer.first_set().specs().size()) + " probes");
  auto session = Session::open(*trace->server, *child, tracer.first_set(), executable,
                               options.trace.session, errors);
  progress.stop();
  if (!session) {
    kill_and_reap(*child);
    return {session.error(), 0};
  }
  tracer.adopt(std::make_unique<Session>(std::move(*session)), tracer.first_set());
  tracer.start(*child);
  Outcome outcome = wait_for(*child);
  // Like strace -f: the trace ends when the last followed process does.
  while (options.trace.follow && !g_interrupted && !tracer.all_ended()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int output_error = finish_trace(*trace, options.trace, errors);
  // What the table cannot hold, said under it (docs/usage.md, "`run`").
  if (options.trace.session.syscall_summary) errors << kLoaderCallsUnseen;
  outcome.status = with_output_error(outcome.status, output_error);
  return outcome;
}

}  // namespace

int run_run(const RunOptions& options, std::ostream& errors) {
  // Every file, socket and directory of the trace is closed and removed by
  // now: only the exit is left.
  const Outcome outcome = trace_command(options, errors);
  if (outcome.signal != 0) die_by(outcome.signal);
  return outcome.status;
}

}  // namespace dprobe::cli
