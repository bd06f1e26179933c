// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/run_command.h"

#include <signal.h>
#include <sys/mman.h>
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

#include "cli/control_server.h"
#include "cli/executable.h"
#include "cli/launcher.h"
#include "cli/probe_plan.h"
#include "cli/process_symbolizer.h"
#include "cli/session.h"
#include "cli/trace_loop.h"
#include "cli/tracer.h"
#include "trace/shared_memory.h"

namespace dprobe::cli {
namespace {

constexpr int kExitNotRun = 127;
constexpr int kExitFailure = 1;

std::atomic<pid_t> g_child{0};
std::atomic<bool> g_interrupted{false};

// Ctrl-C reaches CMD directly (same process group); a signal sent to dprobe
// alone is passed on, and dprobe lives to write out the rest.
void forward_signal(int sig) {
  g_interrupted = true;
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, sig);
}

void forward_signals() {
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);
  listen_for_pause_and_resume();
}

int exit_status_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitFailure;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return kExitFailure;
  }
  return exit_status_of(status);
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  wait_for(pid);
}

}  // namespace

int run_run(const RunOptions& options, std::ostream& errors) {
  if (options.command.empty()) {
    errors << "dprobe: error: no command to run (dprobe run [OPTIONS] -- CMD [ARGS])\n";
    return 2;
  }
  const std::string executable = find_executable(options.command[0]);
  if (auto traceable = check_traceable(executable); !traceable) {
    errors << "dprobe: error: " << traceable.error().message << "\n";
    return kExitNotRun;
  }
  DefinitionSources sources = options.sources;
  sources.executable = executable;
  auto set = load_definitions(sources, errors);
  if (!set) return kExitBadDefinition;
  auto disabled = disabled_ids(options.disabled, *set);
  if (!disabled) {
    errors << "dprobe: error: " << disabled.error().message << "\n";
    return kExitBadDefinition;
  }

  OutputFile output;
  if (!options.output.empty()) {
    output.file = std::fopen(options.output.c_str(), "w");
    if (output.file == nullptr) {
      output.file = stdout;
      errors << "dprobe: error: " << options.output << ": " << std::strerror(errno) << "\n";
      return kExitFailure;
    }
  }

  auto server = ControlServer::create();
  if (!server) {
    errors << "dprobe: error: control socket: " << server.error().message << "\n";
    return kExitFailure;
  }
  auto child = launch(options.command, executable, agent_library_path(), server->socket_path(),
                      options.follow);
  if (!child) {
    errors << "dprobe: error: " << child.error().message << "\n";
    return kExitNotRun;
  }
  g_child = *child;
  forward_signals();

  const SessionOptions session_options{options.buffer_size, options.max_threads};
  TraceOptions trace{sources,     session_options,  options.format,
                     output.file, options.disabled, options.follow};
  Tracer tracer(*server, std::move(trace), std::move(*set), errors);
  auto session =
      Session::open(*server, *child, tracer.first_set(), executable, session_options, errors);
  if (!session) {
    kill_and_reap(*child);
    return session.error();
  }
  tracer.adopt(std::make_unique<Session>(std::move(*session)), tracer.first_set());
  tracer.start(*child);
  const int status = wait_for(*child);
  // Like strace -f: the trace ends when the last followed process does.
  while (options.follow && !g_interrupted && !tracer.all_ended()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  tracer.finish();
  if (options.profile) tracer.print_profile(stdout);
  return status;
}

}  // namespace dprobe::cli
