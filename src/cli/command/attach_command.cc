// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/attach_command.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <thread>

#include "arch/probe_insn.h"
#include "cli/output/progress.h"
#include "cli/process/agent_delivery.h"
#include "cli/process/control_server.h"
#include "cli/process/launcher.h"
#include "cli/process/load_point.h"
#include "cli/process/proc_status.h"
#include "cli/process/process_maps.h"
#include "cli/process/thread_hold.h"
#include "cli/process/traced_process.h"
#include "cli/session/session.h"
#include "cli/session/trace_loop.h"
#include "cli/session/trace_setup.h"
#include "cli/session/tracer.h"

namespace dprobe::cli {
namespace {

constexpr int kExitFailure = 1;
// The hook's dlopen runs the agent's whole start, arming included (every
// function of libc, entry and return, on a loaded machine: well over
// 10 s); the session's own replies wait as long.
constexpr auto kSessionStartTimeout = std::chrono::seconds(60);
constexpr auto kLoadPointPatience = std::chrono::seconds(10);
constexpr auto kDetachTimeout = std::chrono::seconds(5);

std::atomic<bool> g_stop{false};

void request_stop(int) { g_stop = true; }

void stop_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = request_stop;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  listen_for_pause_and_resume();
}

// "Uid:\treal\teffective\tsaved\tfs" from /proc/PID/status.
std::vector<uid_t> status_ids(pid_t pid, const std::string& key) {
  std::vector<uid_t> ids;
  std::istringstream in(status_field("/proc/" + std::to_string(pid), key));
  for (uid_t id; in >> id;) ids.push_back(id);
  return ids;
}

// The state letter of a stat file: R, S, D, T, Z (zombie), X (dead).
char process_state_of(const std::string& path) {
  std::ifstream stat(path);
  std::string text;
  std::getline(stat, text);
  const size_t close = text.rfind(')');  // the command may hold spaces and ')'
  return close != std::string::npos && close + 2 < text.size() ? text[close + 2] : '?';
}

std::string command_name(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name.empty() ? "another process" : name;
}

std::vector<pid_t> task_ids(pid_t pid) {
  std::vector<pid_t> tids;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    tids.push_back(static_cast<pid_t>(std::atol(entry.path().filename().c_str())));
  }
  return tids;
}

// A thread of the process that has not exited, 0 if none: its main thread
// may have called pthread_exit (a zombie leader) while the others run on.
pid_t first_live_thread(pid_t pid) {
  for (pid_t tid : task_ids(pid)) {
    const char state =
        process_state_of("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
    if (state != 'Z' && state != 'X' && state != '?') return tid;
  }
  return 0;
}

// A process lives while any of its threads does.
bool any_thread_alive(pid_t pid) { return first_live_thread(pid) != 0; }

// A thread whose /proc entry shows the executable when the main thread's
// no longer does; `pid` if none is left.
pid_t live_thread(pid_t pid) {
  const pid_t tid = first_live_thread(pid);
  return tid != 0 ? tid : pid;
}

// A ptrace tracer of any of its threads (strace, gdb): who, or nothing.
Result<void> check_not_ptraced(pid_t pid) {
  for (pid_t tid : task_ids(pid)) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
    const pid_t tracer = static_cast<pid_t>(std::atol(status_field(dir, "TracerPid").c_str()));
    if (tracer == 0 || tracer == ::getpid()) continue;
    return fail("process " + std::to_string(pid) + " is already traced by " + command_name(tracer) +
                " (pid " + std::to_string(tracer) +
                "): a process has one ptrace tracer at a time; detach it (or end it) and attach "
                "again");
  }
  return {};
}

// By path, or a copy loaded from a memfd ("/memfd:libdprobe_agent.so (deleted)").
bool is_agent(const std::string& path) {
  std::string_view name = std::string_view(path).substr(path.rfind('/') + 1);
  if (name.starts_with("memfd:")) name.remove_prefix(6);
  return name.starts_with("libdprobe_agent");
}

// A dprobe session already on in the process (dprobe run, or another
// attach): the agent publishes its tracer's pid in dprobe_session_tracer,
// read here from outside, without injecting anything.
Result<void> check_no_session(pid_t pid) {
  const auto agent = find_mapped_file(pid, is_agent);
  if (!agent) return {};
  auto marker = variable_in(*agent, "dprobe_session_tracer");
  if (!marker) return {};  // an agent of another build: its session, if any, answers later
  int32_t tracer = 0;
  iovec local{&tracer, sizeof(tracer)};
  iovec remote{reinterpret_cast<void*>(*marker), sizeof(tracer)};
  if (::process_vm_readv(pid, &local, 1, &remote, 1, 0) != sizeof(tracer) || tracer == 0) return {};
  return fail("process " + std::to_string(pid) + " is already traced by dprobe (pid " +
              std::to_string(tracer) + "): one dprobe session per process; end that one first");
}

int ptrace_scope() {
  std::ifstream file("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  return file >> scope ? scope : 0;
}

// Loads the agent into the process (stopped at a load point) and starts
// its session: the process loads the agent, then a fresh copy of the
// attach hook, whose constructor runs the session inside the loader's lock
// (attach_hook.c). The other threads run on meanwhile: one of them may hold
// a lock the loader or the agent needs. The session's side runs on
// another thread here, since the agent's start-up talks to it.
Result<std::unique_ptr<Session>> inject(TracedProcess& process, ControlServer& server,
                                        const lang::DefinitionSet& set,
                                        const std::string& executable,
                                        const SessionOptions& options, bool follow,
                                        std::ostream& errors) {
  const pid_t pid = process.pid();
  auto delivery = AgentDelivery::prepare(process, server);
  if (!delivery) return unexpected(delivery.error());
  // Where the main thread goes back to after the calls: no jump may cover
  // it until it has gone on.
  SessionOptions session_options = options;
  const auto stop = process.main_stop_point();
  if (!stop) return unexpected(stop.error());
  session_options.caller_places.push_back(stop->pc);
  if (stop->in_system_call) {
    session_options.caller_places.push_back(stop->pc - arch::kSyscallInsnBytes);
  }
  process.release_other_threads();
  if (auto agent = delivery->load_agent(follow); !agent) return unexpected(agent.error());

  // While the agent arms, the program's threads are held (thread_hold.h).
  ThreadHold hold(process);
  session_options.hold_threads = [&](const std::vector<uint32_t>& running) {
    return hold.hold(running);
  };
  session_options.release_threads = [&] { hold.release(); };
  int status = 0;
  std::unique_ptr<Session> session;
  std::thread serving([&] {
    auto opened = Session::open(server, pid, set, executable, session_options, errors);
    if (!opened) {
      status = opened.error();
      return;
    }
    // In its final place before go(): the serving thread it starts holds it.
    auto owned = std::make_unique<Session>(std::move(*opened));
    if (auto go = owned->go(); !go) {
      status = kExitFailure;
      return;
    }
    session = std::move(owned);
  });
  auto hooked = delivery->load_hook(follow, kSessionStartTimeout, [&] { hold.serve(); });
  hold.end();
  serving.join();
  delivery->hook_done();
  if (hooked) delivery->close_hook(*hooked);
  if (!hooked) return unexpected(hooked.error());
  if (!session) {
    return fail(status == kExitBadDefinition ? "" : "the agent did not start in the process");
  }
  return session;
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

Result<void> check_attachable(pid_t pid) {
  struct stat st {};
  if (pid <= 0 || ::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) {
    return fail("no such process: " + std::to_string(pid));
  }
  if (!any_thread_alive(pid)) {
    return fail("process " + std::to_string(pid) +
                " has exited (its parent has not reaped it yet): there is nothing to trace");
  }
  const auto uids = status_ids(pid, "Uid");
  const auto gids = status_ids(pid, "Gid");
  if ((uids.size() >= 2 && uids[0] != uids[1]) || (gids.size() >= 2 && gids[0] != gids[1])) {
    return fail("process " + std::to_string(pid) +
                " runs set-uid or set-gid (its real and effective ids differ): dprobe does not "
                "trace across a privilege boundary; start the program without its set-id bit, "
                "as the user it should run as, and trace that");
  }
  const uid_t me = ::getuid();
  if (me == 0 && st.st_uid != 0) {
    // The agent talks to a dprobe of its own user only, through a socket
    // in that user's private directory.
    return fail("process " + std::to_string(pid) + " runs as uid " + std::to_string(st.st_uid) +
                ": attach as that user (for example: setpriv --reuid=" + std::to_string(st.st_uid) +
                " --regid=" + std::to_string(st.st_gid) +
                " --clear-groups dprobe attach ...), not as root");
  }
  if (me != 0 && st.st_uid != me) {
    return fail("process " + std::to_string(pid) + " belongs to another user (uid " +
                std::to_string(st.st_uid) + "): attach as that user");
  }
  if (auto untraced = check_not_ptraced(pid); !untraced) return untraced;
  if (auto alone = check_no_session(pid); !alone) return alone;
  if (me != 0 && ptrace_scope() >= 1) {
    return fail("ptrace is restricted to a process's descendants (kernel.yama.ptrace_scope = " +
                std::to_string(ptrace_scope()) +
                "): give dprobe the capability (setcap cap_sys_ptrace+ep dprobe), or set it to "
                "0 with sysctl kernel.yama.ptrace_scope=0");
  }
  return {};
}

// The process of `id`: itself for a process, its thread group for a thread
// (the kernel lists a thread's /proc/TID too, hidden from readdir). Said on
// `errors` when it is a thread's.
pid_t process_of(pid_t id, std::ostream& errors) {
  if (id <= 0) return id;
  const long group = std::atol(status_field("/proc/" + std::to_string(id), "Tgid").c_str());
  if (group <= 0 || group == id) return id;
  errors << "dprobe: " << id << " is a thread of process " << group
         << ": attaching to the process\n";
  return static_cast<pid_t>(group);
}

int run_attach(const AttachOptions& asked, std::ostream& terminal) {
  // Outlives everything that keeps the stream (the sessions).
  Progress progress(terminal);
  std::ostream& errors = progress.stream();
  AttachOptions options = asked;
  options.pid = process_of(asked.pid, errors);
  if (auto attachable = check_attachable(options.pid); !attachable) {
    errors << "dprobe: error: " << attachable.error().message << "\n";
    return kExitFailure;
  }
  const std::string executable = executable_of(live_thread(options.pid));
  // A running program whose probe is refused is left running, untraced.
  TraceSettings settings = options.trace;
  settings.session.kill_on_abort = false;
  progress.start("reading the definitions");
  auto trace = set_up_trace(settings, executable, errors);
  progress.stop();
  if (!trace) return report(trace.error(), errors);
  Tracer& tracer = *trace->tracer;
  // Before anything is armed: a Ctrl-C from then on detaches cleanly
  // (it is only looked at once the session runs), never kills dprobe
  // with the probes in place.
  stop_on_signals();
  auto process = stop_at_load_point(options.pid, kLoadPointPatience, g_stop);
  if (!process) {
    errors << "dprobe: error: " << process.error().message << "\n";
    return kExitFailure;
  }
  // Every thread stopped: no child it starts from now on is missed.
  trace->watch_children(options.pid, settings.follow);
  progress.start("arming " + std::to_string(tracer.first_set().specs().size()) + " probes");
  auto injected = inject(*process, *trace->server, tracer.first_set(), executable, settings.session,
                         settings.follow, errors);
  progress.stop();
  process->detach();  // the process runs again, probes armed
  if (injected) (void)(*injected)->resumed();
  if (!injected) {
    // No message: the session reported a refused definition already.
    if (injected.error().message.empty()) return kExitBadDefinition;
    errors << "dprobe: error: " << injected.error().message << "\n";
    return kExitFailure;
  }
  tracer.adopt(std::move(*injected), tracer.first_set());
  tracer.start(options.pid);
  // A long trace is not silent on a terminal: a status line on stderr,
  // where the trace itself does not print (docs/usage.md, "attach").
  if (!settings.output.empty() || ::isatty(STDOUT_FILENO) != 1) {
    const size_t probes = tracer.first_set().specs().size();
    progress.follow([&tracer, probes, pid = options.pid] {
      return tracing_status(probes, pid, tracer.hits_so_far());
    });
  }
  const auto start = std::chrono::steady_clock::now();
  const auto limit = std::chrono::duration<double>(options.duration);
  while (!g_stop && process_alive(options.pid)) {
    if (options.duration > 0 && std::chrono::steady_clock::now() - start >= limit) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  progress.stop();
  const bool detached = tracer.detach_all(kDetachTimeout);
  // The trace could not be written (a full disk): the status says so.
  const int output_error = finish_trace(*trace, settings, errors);
  return detached && (output_error == 0 || output_error == EPIPE) ? 0 : kExitFailure;
}

}  // namespace dprobe::cli
