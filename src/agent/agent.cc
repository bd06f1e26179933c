// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent: a shared library the CLI preloads into the traced program. Its
// constructor runs before the program's main: it connects to the CLI, says
// which objects are loaded where, receives the probes, prepares and arms
// them, and lets the program go. It never prints, exits or throws: if
// anything fails, the program runs untraced.
#include "agent/agent.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/agent_state.h"
#include "agent/arming.h"
#include "agent/bind_interposers.h"
#include "agent/controller.h"
#include "agent/fork.h"
#include "agent/loaded_objects.h"
#include "agent/loader_watch.h"
#include "agent/return_probes.h"
#include "agent/signals.h"
#include "agent/thread_trace.h"
#include "agent/unsafe_code.h"
#include "agent/vdso.h"
#include "protocol/channel.h"
#include "trace/fetch_exec.h"
#include "trace/ring_buffer.h"
#include "trace/shared_memory.h"

namespace dprobe::agent {
namespace {

struct ControlConfig {
  std::string path;
  std::string agent;
  bool follow = false;
};

ControlConfig& config() {
  static ControlConfig& config = *new ControlConfig;  // read by fork and exec to the end
  return config;
}

// Children the program starts are not traced unless followed: the agent
// takes itself out of the environment they inherit (an exec of the traced
// process itself puts it back, see exec.cc).
void scrub_environment(const std::string& agent_path) {
  ::unsetenv(kControlEnv);
  ::unsetenv(kFollowEnv);
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr) return;
  std::string kept;
  std::string_view rest(preload);
  while (!rest.empty()) {
    const size_t end = rest.find_first_of(": ");
    const std::string_view entry = rest.substr(0, end);
    if (!entry.empty() && entry != agent_path)
      kept += (kept.empty() ? "" : ":") + std::string(entry);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  if (kept.empty()) {
    ::unsetenv("LD_PRELOAD");
  } else {
    ::setenv("LD_PRELOAD", kept.c_str(), 1);
  }
}

std::string own_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&scrub_environment), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  return info.dli_fname;
}

int connect_to(const char* path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof(address.sun_path)) {
    ::close(fd);
    return -1;
  }
  std::strcpy(address.sun_path, path);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  // Only our own user's dprobe may drive the agent.
  auto peer = protocol::peer_credentials(fd);
  if (!peer || peer->uid != ::getuid()) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One tracing session: from the CLI's hello to Go. A process can have
// several, one after another (attach, detach, attach again): what stays
// between them (the registry, signal handlers, return stubs) is set up once.
class Agent {
 public:
  // False when the agent could not take part (no CLI, a refused start).
  bool start(const char* control_path) {
    socket_ = connect_to(control_path);
    if (socket_ < 0) return false;
    protocol::Hello hello;
    hello.pid = static_cast<uint32_t>(::getpid());
    hello.objects = loaded_objects();
    if (!protocol::send_message(socket_, protocol::MessageType::kHello, encode(hello)))
      return false;
    auto message = protocol::receive_message(socket_);
    if (!message || message->type != protocol::MessageType::kProbes) return false;
    auto probes = protocol::decode_probes(message->payload);
    if (!probes) return false;
    protocol::ArmReport report = prepare(*probes);
    const int memory_fd = shm_ ? shm_->fd() : -1;
    const bool sent = protocol::send_message(socket_, protocol::MessageType::kArmReport,
                                             encode(report), memory_fd)
                          .has_value();
    if (shm_) shm_->close_descriptor();  // the CLI has its own now
    if (!sent) {
      disarm_everything();
      return false;
    }
    auto answer = protocol::receive_message(socket_);
    if (!answer || answer->type != protocol::MessageType::kGo) {
      disarm_everything();
      return false;
    }
    agent_state().recording.store(true);
    // From now on one thread of the agent's reads the channel: it follows
    // the CLI, and lets the program go if the CLI dies.
    if (!Controller::instance().start(socket_)) {
      disarm_everything();
      return false;
    }
    return true;
  }

 private:
  protocol::ArmReport prepare(const protocol::Probes& probes) {
    AgentState& state = agent_state();
    const bool returns_ok = !probes.return_probes || init_return_probes();
    if (!set_up_once() || !create_memory(probes) || !returns_ok) {
      return failed(probes,
                    "the agent could not set up (memory, signals, or the return "
                    "stubs' unwind information)");
    }
    {
      // What an earlier session placed goes; the loader probe comes back.
      std::lock_guard lock(state.registry_writer);
      state.registry->disarm_all();
      state.registry->remove_range(0, UINT64_MAX);
      if (!watch_loader(*state.registry)) {
        return failed(probes, "the agent could not follow the dynamic loader");
      }
    }
    // What could be added is armed; the CLI decides whether what was
    // refused ends the session (and then the abort disarms it all).
    protocol::ArmReport report = add_probes(probes);
    {
      std::lock_guard lock(state.registry_writer);
      if (auto armed = state.registry->arm_all(); !armed) {
        return failed(probes, armed.error().message);
      }
    }
    report.trace_memory_bytes = shm_ ? shm_->size() : 0;
    return report;
  }

  // The registry and the signal handlers live as long as the process.
  static bool set_up_once() {
    AgentState& state = agent_state();
    if (state.registry) return true;
    auto registry = core::ProbeRegistry::create();
    if (!registry || !install_signal_handlers()) return false;
    state.registry.emplace(std::move(*registry));
    blacklist_unsafe_code(*state.registry);
    return true;
  }

  protocol::ArmReport failed(const protocol::Probes& probes, const std::string& why) {
    protocol::ArmReport report;
    for (const auto& probe : probes.probes) {
      report.results.push_back({probe.spec.event.id, protocol::ArmStatus::kPatchFailed, why});
    }
    report.trace_memory_bytes = shm_ ? shm_->size() : 0;
    return report;
  }

  // Every session gets trace memory of its own; threads take a ring in the
  // new one at their next hit. An earlier session's is unmapped once no
  // trap handler can still be writing into it.
  bool create_memory(const protocol::Probes& probes) {
    uint32_t event_slots = std::max(probes.event_slots, 1u);
    for (const auto& probe : probes.probes) {
      event_slots = std::max<uint32_t>(event_slots, probe.spec.event.id + 1u);
    }
    const auto layout =
        trace::TraceMemoryLayout::compute(probes.max_threads, event_slots, probes.ring_data_bytes);
    auto shm = trace::SharedMemory::create("dprobe-trace", layout.total_bytes);
    if (!shm) return false;
    auto memory = trace::TraceMemory::initialize(shm->data(), shm->size(), layout);
    if (!memory) return false;
    std::unique_ptr<trace::SharedMemory> previous = std::move(session_memory());
    session_memory() = std::make_unique<trace::SharedMemory>(std::move(*shm));
    shm_ = session_memory().get();
    AgentState& state = agent_state();
    state.memory.emplace(*memory);
    begin_trace_session();
    if (previous) {
      std::lock_guard lock(state.registry_writer);
      state.registry->retire(std::move(previous));
    }
    return true;
  }

  // The trace memory of the process's current session, whichever Agent
  // made it.
  static std::unique_ptr<trace::SharedMemory>& session_memory() {
    static auto& memory = *new std::unique_ptr<trace::SharedMemory>;
    return memory;
  }

  int socket_ = -1;
  trace::SharedMemory* shm_ = nullptr;
};

void init_process(const char* control, bool follow) {
  ControlConfig& c = config();
  c.path = control;
  c.follow = follow;
  static bool done = false;
  if (done) return;
  done = true;
  c.agent = own_path();
  init_clock();
  init_thread_traces();
  install_fork_handlers();
}

__attribute__((constructor)) void dprobe_agent_main() {
  const char* control = std::getenv(kControlEnv);
  if (control == nullptr) return;
  const char* follow = std::getenv(kFollowEnv);
  init_process(control, follow != nullptr && std::strcmp(follow, "1") == 0);
  // Followed children find the agent in the environment they inherit.
  if (!follow_children()) scrub_environment(agent_path());
  start_session();
}

}  // namespace

const std::string& control_path() { return config().path; }
bool follow_children() { return config().follow; }
const std::string& agent_path() { return config().agent; }

bool start_session() {
  if (control_path().empty()) return false;
  return (new Agent())->start(control_path().c_str());  // kept: its trace memory lives on
}

// Never destroyed: breakpoints stay armed through exit handlers and
// destructors of other objects, and their hits need the state.
AgentState& agent_state() {
  static AgentState& state = *new AgentState;
  return state;
}

}  // namespace dprobe::agent

// `dprobe attach` loads the agent into a running process (dlopen, called by
// the process itself under ptrace), then calls this with the control
// socket's path and whether to follow children (1) or not (0): the session
// runs as it does at start-up for `dprobe run`. Returns 0 when tracing, -1
// otherwise (another session is on, or the CLI went away).
extern "C" __attribute__((visibility("default"))) int dprobe_agent_attach(const char* control,
                                                                          int follow) {
  using namespace dprobe::agent;
  if (control == nullptr || Controller::instance().running()) return -1;
  init_process(control, follow == 1);
  set_loaded_late();
  bind_interposers();
  return start_session() ? 0 : -1;
}
