// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent: a shared library the CLI preloads into the traced program. Its
// constructor runs before the program's main: it connects to the CLI, says
// which objects are loaded where, receives the probes, prepares and arms
// them, and lets the program go. It never prints, exits or throws: if
// anything fails, the program runs untraced.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/agent_state.h"
#include "agent/loaded_objects.h"
#include "agent/return_probes.h"
#include "agent/signals.h"
#include "agent/thread_trace.h"
#include "agent/vdso.h"
#include "protocol/channel.h"
#include "trace/fetch_exec.h"
#include "trace/ring_buffer.h"
#include "trace/shared_memory.h"

namespace dprobe::agent {
namespace {

constexpr const char* kControlEnv = "DPROBE_CONTROL";

// Children the program starts are not traced (yet): the agent takes itself
// out of the environment they inherit.
void scrub_environment(const std::string& agent_path) {
  ::unsetenv(kControlEnv);
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

protocol::ArmStatus arm_status_for(core::AddStatus status) {
  switch (status) {
    case core::AddStatus::kNotBoundary:
      return protocol::ArmStatus::kNotBoundary;
    case core::AddStatus::kRejected:
      return protocol::ArmStatus::kRejected;
    case core::AddStatus::kBlacklisted:
      return protocol::ArmStatus::kBlacklisted;
    case core::AddStatus::kNoSlot:
      return protocol::ArmStatus::kNoSlot;
    case core::AddStatus::kNotMapped:
      return protocol::ArmStatus::kNotMapped;
    case core::AddStatus::kOk:
      break;
  }
  return protocol::ArmStatus::kArmed;
}

// The highest $argN an event fetches (return events fetch them at entry).
uint32_t highest_arg(const trace::EventDesc& event) {
  uint32_t highest = 0;
  for (const trace::EventArg& arg : event.args) {
    for (const trace::FetchInsn& insn : arg.code) {
      if (insn.op == trace::FetchOp::kArg) highest = std::max(highest, insn.param + 1);
    }
  }
  return highest;
}

bool has_return_events(const protocol::Probes& probes) {
  for (const auto& probe : probes.probes) {
    if (probe.spec.point.is_return) return true;
  }
  return false;
}

// Room for a record: its fixed part, plus each string at its longest.
uint32_t max_record_size(const trace::EventDesc& event) {
  uint64_t size = event.fixed_size;
  for (const trace::EventArg& arg : event.args) {
    if (trace::is_string_class(trace::fetch_type(arg.type).cls)) {
      size += uint64_t{trace::kMaxStringSize} * (arg.count ? arg.count : 1);
    }
  }
  return static_cast<uint32_t>(std::min<uint64_t>(size, trace::kMaxRecordSize));
}

class Agent {
 public:
  void start(const char* control_path) {
    socket_ = connect_to(control_path);
    if (socket_ < 0) return;
    protocol::Hello hello;
    hello.pid = static_cast<uint32_t>(::getpid());
    hello.objects = loaded_objects();
    if (!protocol::send_message(socket_, protocol::MessageType::kHello, encode(hello))) return;
    auto message = protocol::receive_message(socket_);
    if (!message || message->type != protocol::MessageType::kProbes) return;
    auto probes = protocol::decode_probes(message->payload);
    if (!probes) return;
    protocol::ArmReport report = prepare(*probes);
    const int memory_fd = shm_ ? shm_->fd() : -1;
    if (!protocol::send_message(socket_, protocol::MessageType::kArmReport, encode(report),
                                memory_fd)) {
      disarm();
      return;
    }
    auto answer = protocol::receive_message(socket_);
    if (!answer || answer->type != protocol::MessageType::kGo) {
      disarm();
      return;
    }
    agent_state().recording.store(true);
  }

 private:
  protocol::ArmReport prepare(const protocol::Probes& probes) {
    protocol::ArmReport report;
    AgentState& state = agent_state();
    auto registry = core::ProbeRegistry::create();
    const bool returns_ok = !has_return_events(probes) || init_return_probes();
    if (!registry || !install_signal_handlers() || !create_memory(probes) || !returns_ok) {
      for (const auto& probe : probes.probes) {
        report.results.push_back({probe.spec.event.id, protocol::ArmStatus::kPatchFailed,
                                  "the agent could not set up (memory, signals, or the return "
                                  "stubs' unwind information)"});
      }
      return report;
    }
    state.registry.emplace(std::move(*registry));
    blacklist(*state.registry);
    bool all_ok = true;
    for (const protocol::ProbeRequest& request : probes.probes) {
      const trace::EventDesc& event = request.spec.event;
      state.events.add(std::make_unique<AgentEvent>(
          AgentEvent{event, max_record_size(event), request.spec.point.maxactive,
                     event.is_return ? highest_arg(event) : 0}));
      const core::ProbeSite site{request.address, request.function_address, request.function_size};
      auto added = state.registry->add(site, event.id);
      protocol::ArmResult result{request.spec.event.id, protocol::ArmStatus::kArmed, {}};
      if (!added) {
        result = {request.spec.event.id, arm_status_for(added.error().status),
                  added.error().message};
        all_ok = false;
      }
      report.results.push_back(std::move(result));
    }
    if (all_ok) {
      if (auto armed = state.registry->arm_all(); !armed) {
        for (auto& result : report.results) {
          result = {result.event_id, protocol::ArmStatus::kPatchFailed, armed.error().message};
        }
      }
    }
    report.trace_memory_bytes = shm_ ? shm_->size() : 0;
    return report;
  }

  bool create_memory(const protocol::Probes& probes) {
    uint32_t event_slots = 1;
    for (const auto& probe : probes.probes) {
      event_slots = std::max<uint32_t>(event_slots, probe.spec.event.id + 1u);
    }
    const auto layout =
        trace::TraceMemoryLayout::compute(probes.max_threads, event_slots, probes.ring_data_bytes);
    auto shm = trace::SharedMemory::create("dprobe-trace", layout.total_bytes);
    if (!shm) return false;
    shm_.emplace(std::move(*shm));
    auto memory = trace::TraceMemory::initialize(shm_->data(), shm_->size(), layout);
    if (!memory) return false;
    agent_state().memory.emplace(*memory);
    return true;
  }

  static void blacklist(core::ProbeRegistry& registry) {
    const TextRange self = text_range_of(reinterpret_cast<void*>(&own_path));
    registry.blacklist(self.begin, self.end, "the dprobe agent's own code");
    if (const uint64_t restorer = signal_restorer_address(); restorer != 0) {
      registry.blacklist(restorer, restorer + 16, "the signal return trampoline");
    }
  }

  static void disarm() {
    AgentState& state = agent_state();
    state.recording.store(false);
    if (state.registry) state.registry->disarm_all();
  }

  int socket_ = -1;
  std::optional<trace::SharedMemory> shm_;
};

Agent* g_agent = nullptr;

void stop_recording_in_child() { agent_state().recording.store(false); }

__attribute__((constructor)) void dprobe_agent_main() {
  const char* control = std::getenv(kControlEnv);
  if (control == nullptr) return;
  const std::string path = control;
  scrub_environment(own_path());
  init_clock();
  init_thread_traces();
  ::pthread_atfork(nullptr, nullptr, stop_recording_in_child);
  g_agent = new Agent();
  g_agent->start(path.c_str());
}

}  // namespace

// Never destroyed: breakpoints stay armed through exit handlers and
// destructors of other objects, and their hits need the state.
AgentState& agent_state() {
  static AgentState& state = *new AgentState;
  return state;
}

}  // namespace dprobe::agent
