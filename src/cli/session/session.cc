// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/session/session.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <ostream>

#include "base/strings.h"
#include "cli/clock/trace_clock.h"
#include "cli/output/probe_list.h"
#include "cli/output/terminal_text.h"
#include "cli/plan/arm_errors.h"
#include "cli/plan/definitions.h"
#include "cli/process/namespace_ids.h"
#include "cli/process/traced_process.h"
#include "protocol/channel.h"
#include "trace/event_analysis.h"

namespace dprobe::cli {
namespace {

constexpr int kExitFailure = 1;
constexpr auto kAgentStartTimeout = std::chrono::seconds(10);
constexpr int kReplyTimeoutSeconds = 60;
// How long the program's threads stay held while the agent detaches, at
// most: it writes every probe's bytes back, which takes milliseconds, and
// takes nothing a stopped thread could hold; as long as the CLI waits for
// the detach to be confirmed.
constexpr auto kLongestDetachHold = std::chrono::seconds(5);

void set_reply_timeout(int socket) {
  timeval tv{kReplyTimeoutSeconds, 0};
  ::setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

template <typename T>
Result<T> receive(int socket, protocol::MessageType type,
                  Result<T> (*decode)(std::span<const std::byte>), int* fd = nullptr) {
  auto message = protocol::receive_message(socket);
  if (!message) return unexpected(message.error());
  if (message->type != type) {
    if (message->fd >= 0) ::close(message->fd);
    return fail("the agent sent an unexpected message");
  }
  if (fd != nullptr) {
    *fd = message->fd;
  } else if (message->fd >= 0) {
    ::close(message->fd);
  }
  return decode(message->payload);
}

}  // namespace

Session::Session(const std::string& executable)
    : resolver_(std::make_unique<TargetResolver>(executable)) {}

Session::Session(Session&& other) noexcept
    : socket_(other.socket_),
      pid_(other.pid_),
      kill_on_abort_(other.kill_on_abort_),
      holds_threads_(other.holds_threads_),
      resolver_(std::move(other.resolver_)),
      hello_(std::move(other.hello_)),
      objects_(std::move(other.objects_)),
      symbolizer_(std::move(other.symbolizer_)),
      shm_(std::move(other.shm_)),
      memory_(other.memory_),
      events_(std::move(other.events_)),
      set_(other.set_),
      errors_(other.errors_),
      list_probes_(other.list_probes_),
      exit_notice_(other.exit_notice_),
      pending_(std::move(other.pending_)) {
  // Moved only before go(): no serving thread holds the old one yet.
  other.socket_ = -1;
}

Session::~Session() {
  if (socket_ >= 0) ::shutdown(socket_, SHUT_RDWR);  // ends the serving thread's wait
  if (control_.joinable()) control_.join();
  if (socket_ >= 0) ::close(socket_);
}

Result<Session, int> Session::open(ControlServer& server, pid_t pid, const lang::DefinitionSet& set,
                                   const std::string& executable, const SessionOptions& options,
                                   std::ostream& errors) {
  auto socket = server.accept_from(pid, kAgentStartTimeout);
  if (!socket) {
    errors << "dprobe: error: " << socket.error().message << "\n";
    // `run`: a program whose agent never spoke must not run untraced.
    if (options.kill_on_abort) ::kill(pid, SIGKILL);
    return unexpected(kExitFailure);
  }
  return open_connected(*socket, pid, set, executable, options, errors);
}

Result<Session, int> Session::open_connected(int socket, pid_t pid, const lang::DefinitionSet& set,
                                             const std::string& executable,
                                             const SessionOptions& options, std::ostream& errors) {
  Session session(executable);
  session.socket_ = socket;
  const int status = session.exchange(pid, set, options, errors);
  if (status != 0) {
    session.abort(status);
    return unexpected(status);
  }
  return session;
}

int Session::exchange(pid_t pid, const lang::DefinitionSet& set, const SessionOptions& options,
                      std::ostream& errors) {
  pid_ = pid;
  kill_on_abort_ = options.kill_on_abort;
  holds_threads_ = static_cast<bool>(options.hold_threads);
  set_reply_timeout(socket_);
  auto hello = receive(socket_, protocol::MessageType::kHello, protocol::decode_hello);
  if (!hello || hello->version != protocol::kProtocolVersion) {
    errors << "dprobe: error: no valid hello from the agent"
           << (hello ? "" : ": " + hello.error().message) << "\n";
    return kExitFailure;
  }
  hello_ = std::move(*hello);
  objects_ = std::make_unique<ProcessObjects>(hello_.objects, *resolver_);
  symbolizer_ =
      std::make_unique<ProcessSymbolizer>(*objects_, PerfMap::of_process(pid_, hello_.pid));
  auto plan = plan_probes(set, *objects_, *resolver_);
  if (!plan) {
    for (const lang::ProbeError& error : plan.error()) errors << render_error_safely(error);
    return kExitBadDefinition;
  }
  for (size_t i : options.report_pending ? plan->pending : std::vector<size_t>{}) {
    const trace::EventDesc& event = set.specs()[i].event;
    errors << "dprobe: pending: " << event.group << "/" << event.name << ": "
           << set.specs()[i].point.target.object << " is not loaded yet; armed when it is\n";
  }
  pending_ = plan->pending;
  set_ = &set;
  errors_ = &errors;
  return arm(set, std::move(plan->requests), options, errors);
}

namespace {

bool uses_duration(const trace::FilterProgram& filter) {
  for (const trace::RecordField& field : filter.fields) {
    if (field.source == trace::FieldSource::kDuration) return true;
  }
  return false;
}

bool uses_duration(const trace::EventAnalysis& analysis) {
  if (uses_duration(analysis.filter)) return true;
  for (const trace::HistTrigger& hist : analysis.hists) {
    if (uses_duration(hist.filter)) return true;
    for (const auto* keys : {&hist.spec.keys, &hist.spec.vals}) {
      for (const trace::HistKey& key : *keys) {
        if (!key.stacktrace && key.field.source == trace::FieldSource::kDuration) return true;
      }
    }
  }
  return false;
}

// $duration is a difference of two record times, taken in the agent: it
// is nanoseconds only where hits stamp CLOCK_MONOTONIC.
bool uses_duration(const lang::DefinitionSet& set) {
  for (const trace::ProbeSpec& spec : set.specs()) {
    if (spec.event.analysis && uses_duration(*spec.event.analysis)) return true;
    for (const trace::EventArg& arg : spec.event.args) {
      for (const trace::FetchInsn& insn : arg.code) {
        if (insn.op == trace::FetchOp::kDuration) return true;
      }
    }
  }
  return false;
}

// Event ids are below this, pending ones included.
uint32_t event_slots(const lang::DefinitionSet& set) {
  uint32_t slots = 1;
  for (const trace::ProbeSpec& spec : set.specs()) {
    slots = std::max<uint32_t>(slots, spec.event.id + 1u);
  }
  return slots;
}

std::vector<trace::ProbeSpec> syscall_events(const lang::DefinitionSet& set) {
  std::vector<trace::ProbeSpec> events;
  for (const trace::ProbeSpec& spec : set.specs()) {
    if (trace::is_syscall_source(spec.event.source)) events.push_back(spec);
  }
  return events;
}

// What arms `set` in the agent, every field by its name: no flag can take
// another's value by its place.
protocol::Probes probes_message(const lang::DefinitionSet& set,
                                std::vector<protocol::ProbeRequest> requests,
                                const SessionOptions& options, pid_t pid) {
  const bool durations = uses_duration(set);
  return {
      .ring_data_bytes = static_cast<uint32_t>(options.ring_bytes),
      .max_threads = options.max_threads,
      .return_probes = std::any_of(set.specs().begin(), set.specs().end(),
                                   [](const auto& spec) { return spec.point.is_return; }),
      .event_slots = event_slots(set),
      .optimize = options.optimize,
      .cycle_clock = TraceClock::get().has_cycles() && !durations,
      .probes = std::move(requests),
      .syscall_events = syscall_events(set),
      .syscall_summary = options.syscall_summary,
      .hist_slot_bytes = hist_slot_bytes(set),
      .entry_times = options.entry_times || durations,
      .caller_places = options.caller_places,
      .holds_threads = static_cast<bool>(options.hold_threads),
      .hold_exit = options.hold_exit_of != 0 && options.hold_exit_of == pid,
  };
}

}  // namespace

int Session::arm(const lang::DefinitionSet& set, std::vector<protocol::ProbeRequest> requests,
                 const SessionOptions& options, std::ostream& errors) {
  const protocol::Probes probes = probes_message(set, std::move(requests), options, pid_);
  exit_notice_ = options.exit_notice;
  list_probes_ = options.list_probes;
  if (auto sent = send(protocol::MessageType::kProbes, encode(probes)); !sent) {
    errors << "dprobe: error: " << sent.error().message << "\n";
    return kExitFailure;
  }
  int fd = -1;
  auto report = receive_arm_report(options, fd);
  if (!report) {
    errors << "dprobe: error: no arm report from the agent: " << report.error().message << "\n";
    return kExitFailure;
  }
  RefusalReport refusals(set);
  for (const protocol::ArmResult& result : report->results) refusals.add(result);
  errors << refusals.render();
  if (list_probes_) list_probes(*report);
  if (refusals.fatal()) {
    if (fd >= 0) ::close(fd);
    return kExitBadDefinition;
  }
  auto shm = trace::SharedMemory::map(fd);
  if (fd >= 0) ::close(fd);
  if (!shm) {
    errors << "dprobe: error: trace memory: " << shm.error().message << "\n";
    return kExitFailure;
  }
  shm_ = std::make_unique<trace::SharedMemory>(std::move(*shm));
  auto memory = trace::TraceMemory::attach(shm_->data(), shm_->size());
  if (!memory) {
    errors << "dprobe: error: trace memory: " << memory.error().message << "\n";
    return kExitFailure;
  }
  // The agent lays the memory out from what we asked for; anything else
  // (the program wrote over the header first) is not to be read.
  const trace::TraceMemoryLayout asked = trace::TraceMemoryLayout::compute(
      options.max_threads, probes.event_slots, options.ring_bytes, probes.hist_slot_bytes);
  if (memory->slot_count() != asked.slot_count || memory->event_slots() != asked.event_slots ||
      memory->ring_bytes() != asked.ring_bytes) {
    errors << "dprobe: error: trace memory: its layout is not the one asked for\n";
    return kExitFailure;
  }
  memory_ = *memory;
  for (const trace::ProbeSpec& spec : set.specs()) events_.push_back(spec.event);
  return 0;
}

Result<protocol::ArmReport> Session::receive_arm_report(const SessionOptions& options, int& fd) {
  while (true) {
    auto message = protocol::receive_message(socket_);
    if (!message) {
      if (options.release_threads) options.release_threads();
      return unexpected(message.error());
    }
    if (message->type == protocol::MessageType::kArmReport) {
      if (options.release_threads) options.release_threads();
      fd = message->fd;
      return protocol::decode_arm_report(message->payload);
    }
    if (message->fd >= 0) ::close(message->fd);
    if (message->type != protocol::MessageType::kHoldThreads) {
      return fail("the agent sent an unexpected message");
    }
    auto hold = protocol::decode_hold_threads(message->payload);
    const bool held = hold && options.hold_threads && options.hold_threads(hold->running);
    if (auto sent = answer_hold(held); !sent) {
      if (options.release_threads) options.release_threads();
      return unexpected(sent.error());
    }
  }
}

// At `run` the program must not run a single instruction of its own once
// the session failed: the agent, waiting for its probes or for Go, ends it
// with `status` (what dprobe would have exited with); if it cannot be told,
// the program is killed. Attached, the agent lets the program go on.
void Session::abort(int status) {
  if (!kill_on_abort_) {
    (void)send(protocol::MessageType::kAbort, {});
    return;
  }
  const std::vector<std::byte> payload =
      protocol::encode_abort_status(static_cast<uint8_t>(status));
  if (!send(protocol::MessageType::kAbort, payload) && pid_ > 0) ::kill(pid_, SIGKILL);
}

Result<void> Session::send(protocol::MessageType type, std::span<const std::byte> payload) {
  std::lock_guard lock(send_mutex_);
  return protocol::send_message(socket_, type, payload);
}

Result<void> Session::resumed() { return send(protocol::MessageType::kResumed, {}); }

Result<void> Session::let_exit() { return send(protocol::MessageType::kExitGo, {}); }

Result<void> Session::go() {
  auto sent = send(protocol::MessageType::kGo, {});
  if (!sent) return sent;
  // From now on the agent speaks first: objects loaded, detach answered.
  timeval forever{0, 0};
  ::setsockopt(socket_, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever));
  control_ = std::thread([this] { serve(); });
  return {};
}

void Session::serve() {
  // Threads the agent asked to be held while it detaches, let go when it
  // says so (ReleaseThreads, Detached), when the session ends, or at the
  // deadline whatever happens.
  std::unique_ptr<TracedProcess> held;
  auto held_until = std::chrono::steady_clock::now();
  while (true) {
    if (held && !message_within(held_until)) held.reset();
    auto message = protocol::receive_message(socket_);
    if (!message) break;  // the program is gone, or we let go
    if (message->fd >= 0) ::close(message->fd);
    if (message->type == protocol::MessageType::kObjectsChanged) {
      auto changed = protocol::decode_objects_changed(message->payload);
      if (changed) objects_changed(*changed);
    } else if (message->type == protocol::MessageType::kArmReport) {
      auto report = protocol::decode_arm_report(message->payload);
      if (report) report_failures(*report);
    } else if (message->type == protocol::MessageType::kHoldThreads) {
      held = hold_for_detach(message->payload);
      held_until = std::chrono::steady_clock::now() + kLongestDetachHold;
    } else if (message->type == protocol::MessageType::kReleaseThreads) {
      held.reset();
    } else if (message->type == protocol::MessageType::kExiting) {
      exiting_ = true;
      if (exit_notice_ >= 0) (void)::eventfd_write(exit_notice_, 1);
    } else if (message->type == protocol::MessageType::kDetached) {
      held.reset();
      std::lock_guard lock(detach_mutex_);
      detached_ = true;
      detached_cv_.notify_all();
    }
  }
  held.reset();
  std::lock_guard lock(detach_mutex_);
  detached_ = true;  // nothing left to detach from
  ended_ = true;
  detached_cv_.notify_all();
}

// Whether a message arrives before `deadline`.
bool Session::message_within(std::chrono::steady_clock::time_point deadline) const {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd ready{socket_, POLLIN, 0};
    const int n = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return true;  // the receive reports it
  }
}

// The agent detaches (attach only): it takes its jumps back without a
// breakpoint between while the program's threads are stopped. This thread
// stops them, so it is the one that lets them go (ptrace's tracer is a
// thread).
std::unique_ptr<TracedProcess> Session::hold_for_detach(std::span<const std::byte> payload) {
  std::unique_ptr<TracedProcess> held;
  auto hold = protocol::decode_hold_threads(payload);
  if (hold && holds_threads_) {
    // The agent names its threads as its namespace does (a container's).
    auto process = TracedProcess::hold(pid_, host_thread_ids(pid_, hold->running));
    if (process) held = std::make_unique<TracedProcess>(std::move(*process));
  }
  if (!answer_hold(held != nullptr)) held.reset();
  return held;
}

Result<void> Session::answer_hold(bool held) {
  const std::byte answer{static_cast<uint8_t>(held ? 1 : 0)};
  return send(protocol::MessageType::kThreadsHeld, std::span(&answer, 1));
}

// The loader mapped or unmapped objects: the probes of the new ones, now,
// while the loader waits (their constructors have not run yet).
void Session::objects_changed(const protocol::ObjectsChanged& changed) {
  for (const protocol::LoadedObject& object : changed.unloaded) objects_->remove(object);
  for (const protocol::LoadedObject& object : changed.loaded) objects_->add(object);
  protocol::Probes probes;
  auto plan = plan_probes(*set_, *objects_, *resolver_, &changed.loaded);
  if (plan) {
    placed(plan->requests);
    probes.probes = std::move(plan->requests);
  } else {
    for (const lang::ProbeError& error : plan.error()) *errors_ << render_error_safely(error);
  }
  (void)send(protocol::MessageType::kProbes, encode(probes));
}

std::vector<size_t> Session::pending() const {
  std::lock_guard lock(pending_mutex_);
  return pending_;
}

void Session::placed(const std::vector<protocol::ProbeRequest>& requests) {
  std::lock_guard lock(pending_mutex_);
  std::erase_if(pending_, [&](size_t i) {
    return std::any_of(requests.begin(), requests.end(), [&](const auto& request) {
      return request.spec.event.id == set_->specs()[i].event.id;
    });
  });
}

void Session::report_failures(const protocol::ArmReport& report) {
  RefusalReport refusals(*set_);
  for (const protocol::ArmResult& result : report.results) refusals.add(result);
  *errors_ << refusals.render();
  if (list_probes_) list_probes(report);
}

// --probes: each probe's place and how it is armed, after where each IFUNC
// went ("strlen -> __strlen_avx2+0x0/0x100").
void Session::list_probes(const protocol::ArmReport& report) {
  for (const protocol::ArmResult& result : report.results) {
    if (result.implementation == 0) continue;
    const auto spec = std::find_if(set_->specs().begin(), set_->specs().end(),
                                   [&](const auto& s) { return s.event.id == result.event_id; });
    if (spec == set_->specs().end()) continue;
    *errors_ << spec->event.group << "/" << spec->event.name << ": "
             << printable(spec->point.target.symbol) << " -> "
             << implementation_place(result.implementation) << "\n";
  }
  *errors_ << render_probe_states(report.states, *symbolizer_);
}

// An IFUNC's implementation by its symbol, else as PATH:0xOFFSET (a
// stripped library names its implementations in .symtab only).
std::string Session::implementation_place(uint64_t address) const {
  if (auto named = symbol_location(address, *symbolizer_)) return std::move(*named);
  const auto object = objects_->containing(address);
  if (!object) return hex(address);
  const auto offset = object->file->elf.file_offset_of(address - object->loaded->bias);
  return offset ? object->file->elf.path() + ":" + hex(*offset) : hex(address);
}

Result<void> Session::detach(std::chrono::milliseconds timeout) {
  if (auto sent = send(protocol::MessageType::kDetach, {}); !sent) {
    return sent;
  }
  std::unique_lock lock(detach_mutex_);
  if (!detached_cv_.wait_for(lock, timeout, [&] { return detached_; })) {
    return fail("the agent did not confirm the detach in time");
  }
  return {};
}

}  // namespace dprobe::cli
