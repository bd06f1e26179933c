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
#include "trace/shared_memory.h"

namespace dprobe::cli {
namespace {

constexpr int kExitNotRun = 127;
constexpr int kExitFailure = 1;

std::atomic<pid_t> g_child{0};
// Set by SIGUSR1 (1: resume) and SIGUSR2 (2: pause), applied by the drainer.
std::atomic<int> g_tracing_request{0};

void request_tracing(int sig) { g_tracing_request = sig == SIGUSR1 ? 1 : 2; }

// Ctrl-C reaches CMD directly (same process group); a signal sent to dprobe
// alone is passed on, and dprobe lives to write out the rest.
void forward_signal(int sig) {
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, sig);
}

void forward_signals() {
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);
  sa.sa_handler = request_tracing;
  for (int sig : {SIGUSR1, SIGUSR2}) ::sigaction(sig, &sa, nullptr);
}

// Which events run: those not disabled with --disable; all of them paused
// while tracing is off.
class EventSwitch {
 public:
  EventSwitch(const trace::TraceMemory& memory, std::vector<uint16_t> disabled,
              const lang::DefinitionSet& set)
      : memory_(memory), disabled_(std::move(disabled)) {
    for (const trace::ProbeSpec& spec : set.specs()) ids_.push_back(spec.event.id);
    apply(true);
  }

  void poll() {
    const int request = g_tracing_request.exchange(0);
    if (request != 0) apply(request == 1);
  }

 private:
  void apply(bool on) {
    for (uint16_t id : ids_) {
      const bool off = !on || std::find(disabled_.begin(), disabled_.end(), id) != disabled_.end();
      memory_.counter(id).disabled.store(off ? 1 : 0, std::memory_order_relaxed);
    }
  }
  const trace::TraceMemory& memory_;
  std::vector<uint16_t> disabled_;
  std::vector<uint16_t> ids_;
};

// --disable names: [GRP/]EVENT, each of which must name an event.
Result<std::vector<uint16_t>> disabled_ids(const std::vector<std::string>& names,
                                           const lang::DefinitionSet& set) {
  std::vector<uint16_t> ids;
  for (const std::string& name : names) {
    const size_t slash = name.find('/');
    const std::string group = slash == std::string::npos ? "" : name.substr(0, slash);
    const std::string event = slash == std::string::npos ? name : name.substr(slash + 1);
    bool found = false;
    for (const trace::ProbeSpec& spec : set.specs()) {
      if (spec.event.name == event && (group.empty() || spec.event.group == group)) {
        ids.push_back(spec.event.id);
        found = true;
      }
    }
    if (!found) return fail("--disable " + name + ": no such event");
  }
  return ids;
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

void print_profile(const lang::DefinitionSet& set, const trace::TraceMemory& memory,
                   std::FILE* out) {
  for (const trace::ProbeSpec& spec : set.specs()) {
    const trace::EventCounter& counter = memory.counter(spec.event.id);
    std::fprintf(out, "  %-44s %15llu %15llu\n", spec.event.name.c_str(),
                 static_cast<unsigned long long>(counter.hits.load()),
                 static_cast<unsigned long long>(counter.misses.load()));
  }
}

// Drains while the program runs; a pass that finds nothing waits a little.
class Drainer {
 public:
  Drainer(TraceReader& reader, EventSwitch& events)
      : thread_([this, &reader, &events] {
          while (!stop_.load(std::memory_order_acquire)) {
            events.poll();
            if (reader.poll() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
          }
        }) {}
  ~Drainer() {
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct OutputFile {
  std::FILE* file = stdout;
  ~OutputFile() {
    if (file != stdout) std::fclose(file);
  }
};

}  // namespace

std::optional<uint64_t> parse_buffer_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  uint64_t scale = 1;
  std::string digits = text;
  switch (digits.back()) {
    case 'k':
    case 'K':
      scale = 1u << 10;
      digits.pop_back();
      break;
    case 'm':
    case 'M':
      scale = 1u << 20;
      digits.pop_back();
      break;
    case 'g':
    case 'G':
      scale = 1u << 30;
      digits.pop_back();
      break;
    default:
      break;
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const uint64_t value = std::stoull(digits) * scale;
  if (value == 0 || value > (uint64_t{1} << 30)) return std::nullopt;
  uint64_t size = 4096;
  while (size < value) size <<= 1;
  return size;
}

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
  auto child = launch(options.command, executable, agent_library_path(), server->socket_path());
  if (!child) {
    errors << "dprobe: error: " << child.error().message << "\n";
    return kExitNotRun;
  }
  g_child = *child;
  forward_signals();

  SessionOptions session_options{options.buffer_size, options.max_threads};
  auto session = Session::open(*server, *child, *set, sources.executable, session_options, errors);
  if (!session) {
    kill_and_reap(*child);
    return session.error();
  }
  TraceReader reader(session->memory(), session->events(), &session->symbolizer(), options.format,
                     output.file);
  EventSwitch events(session->memory(), std::move(*disabled), *set);
  int status;
  {
    Drainer drainer(reader, events);
    if (auto go = session->go(); !go) {
      errors << "dprobe: error: " << go.error().message << "\n";
    }
    status = wait_for(*child);
  }
  reader.poll();
  for (const std::string& problem : reader.problems())
    errors << "dprobe: warning: " << problem << "\n";
  if (const uint64_t lost = reader.lost(); lost > 0) {
    errors << "dprobe: " << lost << " events lost (rings full; try --buffer-size)\n";
  }
  if (options.profile) print_profile(*set, session->memory(), stdout);
  return status;
}

}  // namespace dprobe::cli
