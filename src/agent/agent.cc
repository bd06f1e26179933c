// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent: a shared library the CLI preloads into the traced program. Its
// constructor runs before the program's main: it connects to the CLI, says
// which objects are loaded where, receives the probes, prepares and arms
// them, and lets the program go. It never prints or throws, and exits only
// when the CLI says so (kAbort at `run`): if anything fails, the program
// runs untraced.
#include "agent/agent.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/agent_state.h"
#include "agent/arming.h"
#include "agent/bind_interposers.h"
#include "agent/controller.h"
#include "agent/environment.h"
#include "agent/exit_hold.h"
#include "agent/fork.h"
#include "agent/held_directories.h"
#include "agent/held_threads.h"
#include "agent/hit/return_probes.h"
#include "agent/hit/thread_trace.h"
#include "agent/hit/vdso.h"
#include "agent/jump_optimizer.h"
#include "agent/loaded_objects.h"
#include "agent/loader_watch.h"
#include "agent/semaphores.h"
#include "agent/signals.h"
#include "agent/syscall_dispatch.h"
#include "agent/thread_census.h"
#include "agent/unsafe_code.h"
#include "arch/runtime/agent_descriptors.h"
#include "arch/runtime/raw_syscall.h"
#include "protocol/channel.h"
#include "trace/hit/fetch_exec.h"
#include "trace/hit/ring_buffer.h"
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

std::string own_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&own_path), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  return info.dli_fname;
}

// The connected socket, and the pid of the dprobe at its other end.
int connect_to(const char* path, int32_t& peer_pid) {
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
  peer_pid = peer->pid;
  return fd;
}

// The channel `dprobe attach` made in the process itself (a socket pair,
// for a process whose root is not dprobe's: cli/process/remote_files.h),
// and the pid of that dprobe; taken by the next session instead of a
// connection by path.
struct AdoptedControl {
  int fd = -1;
  int32_t tracer = 0;
  bool follow = false;
};
constinit AdoptedControl g_adopted;

// With --follow, dprobe's directory, sent over that channel (SCM_RIGHTS)
// before anything else: the process's children connect to the socket in
// it through /proc/self/fd/N/ctl, whatever their root.
arch::AgentDescriptor& control_directory() {
  static arch::AgentDescriptor& held = *new arch::AgentDescriptor;
  return held;
}
char g_control_through_directory[64];

void receive_control_directory(int socket) {
  std::byte marker{};
  auto got = protocol::receive_with_descriptor(socket, std::span(&marker, 1), MSG_DONTWAIT);
  if (!got || got->fd < 0) return;
  if (!control_directory().adopt(got->fd)) return;
  std::snprintf(g_control_through_directory, sizeof(g_control_through_directory),
                "/proc/self/fd/%d/ctl", control_directory().fd());
}

int control_connection(const char* path, int32_t& peer_pid) {
  if (g_adopted.fd < 0) return connect_to(path, peer_pid);
  peer_pid = g_adopted.tracer;
  return std::exchange(g_adopted.fd, -1);
}

// One tracing session: from the CLI's hello to Go. A process can have
// several, one after another (attach, detach, attach again): what stays
// between them (the registry, signal handlers, return stubs) is set up once.
class Agent {
 public:
  // False when the agent could not take part (no CLI, a refused start).
  // `borrowed`: the calling thread is the program's, borrowed by `dprobe
  // attach` under ptrace, and holds the loader's lock.
  bool start(const char* control_path, bool borrowed) {
    socket_ = std::make_unique<arch::AgentDescriptor>();
    // High and registered: the program's close/dup2 of every number leave it be.
    int32_t tracer = 0;
    if (!socket_->adopt(control_connection(control_path, tracer))) return false;
    if (borrowed) return start_borrowed(tracer);
    if (!handshake()) {
      abandon();
      return false;
    }
    publish_session(tracer);
    // From now on one thread of the agent's reads the channel: it follows
    // the CLI, and lets the program go if the CLI dies.
    if (!Controller::instance().start(std::move(socket_))) {
      abandon();
      publish_session(0);
      return false;
    }
    enable_dispatch_if_configured();
    return true;
  }

 private:
  // Whatever failed, the process keeps nothing of the session: no probe
  // armed, no socket left open in it, nothing recorded.
  void abandon() {
    agent_state().recording.store(false);
    disarm_everything();
    if (socket_) socket_->close();
  }

  // After the controller's thread is made: its creation is not the
  // program's system call. (Alone, as `run` starts, the program has no
  // other thread; attached, each of its threads is asked.)
  static void enable_dispatch_if_configured() {
    if (syscall_tracing_configured()) enable_dispatch_on_every_thread();
  }

  // Attached, the probes are armed on the controller's thread while this
  // one waits, parked. Every breakpoint this thread reached would be a
  // ptrace stop the CLI has to pass on, thousands of them with every
  // function of libc probed; and a trap handler stopped there holds up
  // the barrier that lets probes take jumps. What takes the loader's lock
  // (dlopen, dlsym) is set up here first: this thread holds it.
  bool start_borrowed(int32_t tracer) {
    std::optional<protocol::Probes> probes = greet();
    if (!probes) {
      abandon();
      return false;
    }
    const bool ready = set_up_for(*probes);
    auto job = [this, probes = std::move(*probes), ready, tracer](arch::AgentDescriptor& socket) {
      // A parked thread not seen waiting only keeps jumps from going direct.
      (void)parked_thread_settled();
      if (!conclude(socket, probes, ready)) {
        disarm_everything();
        return false;
      }
      publish_session(tracer);
      return true;
    };
    if (!Controller::instance().start(std::move(socket_), std::move(job))) {
      publish_session(0);
      return false;
    }
    enable_dispatch_if_configured();
    return true;
  }

  // Hello, probes, arm report, Go: true once the CLI said Go.
  bool handshake() {
    std::optional<protocol::Probes> probes = greet();
    if (!probes) return false;
    const bool ready = set_up_for(*probes);
    return conclude(*socket_, *probes, ready);
  }

  // The hello; the probes the CLI answers with, or nullopt.
  std::optional<protocol::Probes> greet() {
    const int socket = socket_->fd();
    protocol::Hello hello;
    hello.pid = arch::raw_getpid();
    hello.objects = loaded_objects();
    if (!protocol::send_message(socket, protocol::MessageType::kHello, encode(hello))) {
      return std::nullopt;
    }
    auto message = protocol::receive_message(socket);
    if (message) end_if_told(*message);
    if (!message || message->type != protocol::MessageType::kProbes) return std::nullopt;
    auto probes = protocol::decode_probes(message->payload);
    if (!probes) return std::nullopt;
    return std::move(*probes);
  }

  // What stays from one session to the next, and what the probes need
  // that loads libraries (the return stubs' unwinder).
  static bool set_up_for(const protocol::Probes& probes) {
    return set_up_once() && (!probes.return_probes || init_return_probes());
  }

  // Arms, reports, and waits for Go: true once the CLI said it.
  bool conclude(arch::AgentDescriptor& channel, const protocol::Probes& probes, bool ready) {
    const int socket = channel.fd();
    protocol::ArmReport report = prepare(probes, ready, channel);
    const int memory_fd = shm_ ? shm_->fd() : -1;
    const bool sent =
        channel.intact() &&
        protocol::send_message(socket, protocol::MessageType::kArmReport, encode(report), memory_fd)
            .has_value();
    if (shm_) shm_->close_descriptor();  // the CLI has its own now
    if (!sent) return false;
    auto answer = protocol::receive_message(socket);
    if (answer) end_if_told(*answer);
    return answer && answer->type == protocol::MessageType::kGo && channel.intact();
  }

  // `run`: the CLI refused the session (a bad definition, a probe it could
  // not place) and said with what status the program ends, before any of
  // its own code runs. The one exit of the agent's own.
  static void end_if_told(const protocol::Message& message) {
    if (message.type != protocol::MessageType::kAbort) return;
    const std::optional<uint8_t> status = protocol::decode_abort_status(message.payload);
    if (!status) return;
    agent_state().recording.store(false);
    for (;;) arch::raw_syscall(SYS_exit_group, *status);
  }

  // `ready`: what set_up_for() said.
  protocol::ArmReport prepare(const protocol::Probes& probes, bool ready,
                              arch::AgentDescriptor& channel) {
    AgentState& state = agent_state();
    if (!ready || !create_memory(probes)) {
      return failed(probes,
                    "the agent could not set up (memory, signals, or the return "
                    "stubs' unwind information)");
    }
    {
      // What an earlier session placed goes; the loader probe comes back.
      std::lock_guard lock(state.registry_writer);
      state.registry->disarm_all();
      state.registry->remove_range(0, UINT64_MAX);
      release_semaphores();
      if (!watch_loader(*state.registry)) {
        return failed(probes, "the agent could not follow the dynamic loader");
      }
      // Before any probe: none may go where the exit is sent to the agent.
      if (probes.hold_exit) (void)install_exit_hold(*state.registry);
    }
    // Alone (`dprobe run`, before the program runs), code no breakpoint may
    // go on can still take a jump, unless it covers a place this thread
    // goes back to: a handler's, or (attached) where it was stopped.
    set_optimization(probes.optimize);
    set_caller_places(probes.caller_places);
    {
      std::lock_guard lock(state.registry_writer);
      const auto hidden = hidden_return_places();
      std::vector<uint64_t> avoid;
      if (hidden) {
        for (const arch::InterruptedPlace& place : *hidden) avoid.push_back(place.pc);
      }
      state.registry->allow_direct_jumps(probes.optimize && no_other_threads() && hidden,
                                         std::move(avoid));
    }
    // What could be added is armed; the CLI decides whether what was
    // refused ends the session (and then the abort disarms it all).
    protocol::ArmReport report = add_probes(probes, Objects::kRelocated);
    add_syscall_events(probes, report);
    // A probe records from the moment it is armed, as the kernel's does
    // once registered: attached, the program's threads run meanwhile, and
    // their hits before the CLI's Go are the session's too.
    state.entry_times.store(probes.entry_times, std::memory_order_relaxed);
    state.exit_waits_pid.store(probes.hold_exit ? arch::raw_getpid() : 0,
                               std::memory_order_release);
    state.recording.store(true);
    hold_threads(probes, channel);
    {
      std::lock_guard lock(state.registry_writer);
      auto armed = state.registry->arm_all();
      state.registry->allow_direct_jumps(false);
      if (!armed) return failed(probes, armed.error().message);
    }
    // Breakpoints first; then jumps where that is safe.
    optimize_armed(0, UINT64_MAX);
    report.states = probe_states(0, UINT64_MAX);
    report.trace_memory_bytes = shm_ ? shm_->size() : 0;
    return report;
  }

  // Attached, with other threads in the program: the CLI stops them until
  // it has the arm report, so that none reaches a breakpoint before it
  // becomes a jump (one reached with every signal blocked, as a thread's
  // exit does, would kill the process). The census sees them stopped.
  // Whether they are held does not change what is done: it is as safe
  // with them running.
  static void hold_threads(const protocol::Probes& probes, arch::AgentDescriptor& channel) {
    set_cli_holds_threads(probes.holds_threads);
    if (!probes.holds_threads || !probes.optimize || no_other_threads()) return;
    // Nothing else sends yet: the loader's lock, held by the thread that
    // loads the agent, keeps every other thread from asking (loader_watch).
    (void)ask_cli_to_hold_others(channel.fd());
  }

  // The registry and the signal handlers live as long as the process.
  static bool set_up_once() {
    AgentState& state = agent_state();
    if (state.registry) return true;
    auto registry = core::ProbeRegistry::create();
    if (!registry || !install_signal_handlers()) return false;
    state.registry.emplace(std::move(*registry));
    state.registry->use_process_barrier();
    blacklist_unsafe_code(*state.registry);
    return true;
  }

  protocol::ArmReport failed(const protocol::Probes& probes, const std::string& why) {
    protocol::ArmReport report;
    for (const auto& probe : probes.probes) {
      report.results.push_back({probe.spec.event.id, arch::ArmStatus::kPatchFailed, why});
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
    const auto layout = trace::TraceMemoryLayout::compute(
        probes.max_threads, event_slots, probes.ring_data_bytes, probes.hist_slot_bytes);
    auto shm = trace::SharedMemory::create("dprobe-trace", layout.total_bytes);
    if (!shm) return false;
    auto memory = trace::TraceMemory::initialize(shm->data(), shm->size(), layout);
    if (!memory) return false;
    std::unique_ptr<trace::SharedMemory> previous = std::move(session_memory());
    session_memory() = std::make_unique<trace::SharedMemory>(std::move(*shm));
    shm_ = session_memory().get();
    AgentState& state = agent_state();
    memory->header().clock = static_cast<uint32_t>(choose_record_clock(probes.cycle_clock));
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

  std::unique_ptr<arch::AgentDescriptor> socket_;
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
  const AgentWork work;  // start-up is not the program's: nothing it calls counts
  const char* control = std::getenv(kControlEnv);
  if (control == nullptr) return;
  const char* follow = std::getenv(kFollowEnv);
  init_process(control, follow != nullptr && std::strcmp(follow, "1") == 0);
  // What a program exec'd from another root needs to find the agent.
  prepare_held_directories(agent_path(), control_path(), follow_children());
  // Followed children find the agent in the environment they inherit.
  if (!follow_children()) scrub_environment(agent_path());
  start_session();
}

}  // namespace

const std::string& control_path() { return config().path; }

void close_control_directory() {
  control_directory().close();
  g_control_through_directory[0] = '\0';
}
bool follow_children() { return config().follow; }
const std::string& agent_path() { return config().agent; }

namespace {

// kept: its trace memory lives on
bool start_session(bool borrowed) {
  if (control_path().empty()) return false;
  return (new Agent())->start(control_path().c_str(), borrowed);
}

}  // namespace

bool start_session() { return start_session(/*borrowed=*/false); }

// Never destroyed: breakpoints stay armed through exit handlers and
// destructors of other objects, and their hits need the state.
constinit detail::StateStorage detail::g_state;

}  // namespace dprobe::agent

// `dprobe attach` loads the agent into a running process (dlopen, called by
// the process itself under ptrace), then calls this with the control
// socket's path and whether to follow children (1) or not (0): the session
// runs as it does at start-up for `dprobe run`. Returns 0 when tracing, -1
// otherwise (another session is on, or the CLI went away).
// `dprobe attach` unloads its hook through this once the session is on:
// the loader's work for it (its frees) is the agent's, not the program's.
extern "C" __attribute__((visibility("default"))) int dprobe_agent_close(void* library) {
  const dprobe::agent::AgentWork work;
  return ::dlclose(library);
}

// `dprobe attach` into a process whose root is not its own hands the
// agent the process's end of a socket pair through this, before the hook
// starts the session on it; `tracer` is that dprobe's pid.
extern "C" __attribute__((visibility("default"))) int dprobe_agent_adopt_control(int fd, int tracer,
                                                                                 int follow) {
  using namespace dprobe::agent;
  const AgentWork work;
  g_adopted = {fd, tracer, follow == 1};
  if (follow == 1) receive_control_directory(fd);
  return 0;
}

extern "C" __attribute__((visibility("default"))) int dprobe_agent_attach(const char* control,
                                                                          int follow) {
  using namespace dprobe::agent;
  const AgentWork work;  // on the thread dprobe attach borrowed
  if (control == nullptr || Controller::instance().running()) return -1;
  // A channel made by descriptor (a container's process) says how to follow.
  if (g_adopted.fd >= 0) {
    follow = g_adopted.follow ? 1 : 0;
    if (g_control_through_directory[0] != '\0') control = g_control_through_directory;
  }
  init_process(control, follow == 1);
  set_loaded_late();
  bind_interposers();
  // This thread was borrowed by dprobe attach, which holds its own context
  // (a pc maybe at a syscall it will restart) where no census can see it.
  hold_site_rewrites_while_borrowed();
  return start_session(/*borrowed=*/true) ? 0 : -1;
}
