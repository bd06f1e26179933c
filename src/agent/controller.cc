// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/controller.h"

#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "agent/agent.h"
#include "agent/agent_state.h"
#include "agent/held_threads.h"
#include "agent/hit/thread_trace.h"
#include "agent/jump_optimizer.h"
#include "agent/semaphores.h"
#include "agent/signals.h"
#include "agent/syscall_dispatch.h"
#include "agent/syscall_sites.h"
#include "agent/thread_census.h"
#include "arch/runtime/raw_syscall.h"
#include "protocol/channel.h"

extern "C" {
__attribute__((visibility("default"), used)) int32_t dprobe_session_tracer = 0;
}

namespace dprobe::agent {
namespace {

// How often the reading thread also frees what trap handlers let go of,
// and what threads that exited leave behind; how often for a while after
// rings were found scarce (retire_exited_threads): threads that start and
// end without pause take them all within one longer period.
constexpr int kReclaimMilliseconds = 50;
constexpr int kScarceRingsMilliseconds = 5;
constexpr int kScarceRingsPasses = 200;  // a second of them
// How long a loading thread waits for the probes of a new object.
constexpr auto kAnswerTimeout = std::chrono::seconds(10);

}  // namespace

void publish_session(int32_t tracer_pid) {
  __atomic_store_n(&dprobe_session_tracer, tracer_pid, __ATOMIC_RELEASE);
}

// Before the recording stops, while the probes still record: from then on
// the program lets no thread through a guard to an SDT site, so each pass
// through one is an event.
static void close_sdt_guards() {
  AgentState& state = agent_state();
  if (!state.registry) return;
  std::lock_guard lock(state.registry_writer);
  release_semaphores();
}

void disarm_everything() {
  AgentState& state = agent_state();
  close_sdt_guards();
  state.recording.store(false);
  stop_syscall_tracing();
  if (!state.registry) return;
  std::lock_guard lock(state.registry_writer);
  state.registry->disarm_all();
}

Controller*& Controller::current() {
  static Controller* controller = new Controller;  // never destroyed: threads use it to the end
  return controller;
}

Controller& Controller::instance() { return *current(); }

void Controller::forget_after_fork() {
  Controller*& controller = current();
  // The child's copy of the descriptor: the parent's connection stays up.
  if (controller->socket_) controller->socket_->close();
  controller = new Controller;
  publish_session(0);  // the parent's session; a followed child publishes its own
}

bool Controller::start(std::unique_ptr<arch::AgentDescriptor> socket, FirstJob first) {
  {
    std::lock_guard lock(mutex_);
    if (socket_) socket_->close();  // an earlier session's, long gone
    socket_ = std::move(socket);
    closed_ = false;
    detached_ = false;
    exit_let_go_ = false;
    answer_.reset();
  }
  started_.store(false);
  first_ = std::move(first);
  first_done_.store(0);
  const bool waits = static_cast<bool>(first_);
  pthread_t thread;
  auto body = [](void* self) -> void* {
    current_thread().is_agent = true;
    set_site_rewriter();
    auto* controller = static_cast<Controller*>(self);
    controller->started_.store(true);
    if (controller->do_first_job()) controller->read_loop();
    return nullptr;
  };
  // The program's signals are for the program's threads: this one is
  // created with every signal blocked but the three the agent handles (a
  // breakpoint trap with SIGTRAP blocked would be fatal).
  sigset_t blocked;
  sigset_t before;
  sigfillset(&blocked);
  sigdelset(&blocked, SIGTRAP);
  sigdelset(&blocked, SIGSEGV);
  sigdelset(&blocked, SIGBUS);
  sigdelset(&blocked, SIGSYS);
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &blocked, &before, sizeof(uint64_t));
  const int created = ::pthread_create(&thread, nullptr, body, this);
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &before, nullptr, sizeof(uint64_t));
  if (created != 0) {
    std::lock_guard lock(mutex_);
    socket_->close();
    closed_ = true;
    return false;
  }
  ::pthread_detach(thread);
  if (waits) return wait_parked_for_first_job();
  // Known as the agent's before anything asks the process's threads
  // (syscall_dispatch.h turns the dispatch on in the program's only).
  for (int wait = 0; wait < 100000 && !started_.load(); ++wait) ::sched_yield();
  return true;
}

bool Controller::do_first_job() {
  if (!first_) return true;
  const bool done = first_(*socket_);
  first_ = nullptr;
  if (!done) {
    std::lock_guard lock(mutex_);
    socket_->close();
    closed_ = true;
  }
  first_done_.store(done ? 1 : 2);
  arch::raw_syscall(SYS_futex, arch::raw_arg(&first_done_), FUTEX_WAKE_PRIVATE, 1);
  return done;
}

// Nothing of libc runs here from the mask on: the job arms probes in it,
// and a breakpoint reached with every signal blocked would kill the process.
bool Controller::wait_parked_for_first_job() {
  const uint64_t every_signal = ~uint64_t{0};
  uint64_t before = 0;
  arch::raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, arch::raw_arg(&every_signal),
                    arch::raw_arg(&before), sizeof(uint64_t));
  set_parked_thread(arch::raw_gettid());
  uint32_t done = 0;
  while ((done = first_done_.load()) == 0) {
    arch::raw_syscall(SYS_futex, arch::raw_arg(&first_done_), FUTEX_WAIT_PRIVATE, 0, 0);
  }
  set_parked_thread(0);
  arch::raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, arch::raw_arg(&before), 0, sizeof(uint64_t));
  return done == 1;
}

void Controller::read_loop() {
  AgentState& state = agent_state();
  int quick_passes = 0;
  while (true) {
    const int socket = checked_socket();
    if (socket < 0) break;  // the program took the number: as if the CLI died
    pollfd pfd{socket, POLLIN, 0};
    const int ready =
        ::poll(&pfd, 1, quick_passes > 0 ? kScarceRingsMilliseconds : kReclaimMilliseconds);
    if (state.registry) {
      std::lock_guard lock(state.registry_writer);
      state.registry->reclaim();
    }
    quick_passes = retire_exited_threads() ? kScarceRingsPasses : std::max(quick_passes - 1, 0);
    rewrite_syscall_sites();
    optimize_again_when_due();
    // A handler the program installed with the raw system call (as Go's
    // runtime does) is taken as the program's, and the agent's put back.
    check_signal_handlers();
    if (ready <= 0) continue;
    const int now = checked_socket();  // moved away by a dup2 onto it, or taken
    if (now < 0) break;
    auto message = protocol::receive_message(now);
    if (!message) break;  // the CLI is gone
    if (message->type == protocol::MessageType::kProbes) {
      auto probes = protocol::decode_probes(message->payload);
      std::lock_guard lock(mutex_);
      answer_ = probes ? std::optional(std::move(*probes)) : std::optional(protocol::Probes{});
      answered_.notify_all();
    } else if (message->type == protocol::MessageType::kExitGo) {
      std::lock_guard lock(mutex_);
      exit_let_go_ = true;
      answered_.notify_all();
    } else if (message->type == protocol::MessageType::kResumed) {
      set_caller_places({});  // the thread that loaded the agent went on
      restart_optimize_again();
      release_site_rewrites();
    } else if (message->type == protocol::MessageType::kDetach) {
      stop_asking();
      disarm_for_detach(now);
      // The CLI drains once more when told: a hit still writing its record
      // would be counted and never read.
      if (state.registry) state.registry->wait_for_handlers();
      publish_session(0);
      std::lock_guard lock(send_mutex_);
      if (const int reply = checked_socket(); reply >= 0) {
        (void)protocol::send_message(reply, protocol::MessageType::kDetached, {});
      }
    }
  }
  let_go();
}

// Taking a jump back passes through a breakpoint, which a thread with
// every signal blocked must not reach: `attach` holds the program's
// threads meanwhile, and each jump goes back in one write. The registry's
// writer lock and the send lock are taken before they stop (a stopped
// thread must own neither), and nothing allocates until they run again (a
// stopped thread may own the allocator's lock). They run again before the
// handlers are waited for: one stopped inside a hit would hold the wait up.
void Controller::disarm_for_detach(int socket) {
  AgentState& state = agent_state();
  close_sdt_guards();
  state.recording.store(false);
  stop_syscall_tracing();
  if (!state.registry) return;
  std::lock_guard writer(state.registry_writer);
  std::lock_guard sending(send_mutex_);
  const bool held = cli_holds_threads() && ask_cli_to_hold_others(socket);
  state.registry->disarm_all(held);
  if (held) (void)protocol::send_message(socket, protocol::MessageType::kReleaseThreads, {});
}

// The CLI is gone: nothing may stay armed, nobody may wait for it.
void Controller::let_go() {
  disarm_everything();
  publish_session(0);
  close_control_directory();
  std::lock_guard lock(mutex_);
  socket_->close();  // only if the number is still ours
  closed_ = true;
  answered_.notify_all();
}

// A loader thread may wait in ask() inside its trap handler while the
// CLI's answer sits in the socket behind the Detach: the handlers the
// detach waits for would then wait for this thread to read on.
void Controller::stop_asking() {
  std::lock_guard lock(mutex_);
  detached_ = true;
  answered_.notify_all();
}

std::optional<protocol::Probes> Controller::ask(const protocol::ObjectsChanged& changed) {
  std::unique_lock lock(mutex_);
  if (!socket_ || closed_ || detached_) return std::nullopt;
  answer_.reset();
  {
    std::lock_guard send_lock(send_mutex_);
    const int socket = checked_socket();
    if (socket < 0) return std::nullopt;
    if (!protocol::send_message(socket, protocol::MessageType::kObjectsChanged, encode(changed))) {
      return std::nullopt;
    }
  }
  answered_.wait_for(lock, kAnswerTimeout,
                     [&] { return answer_.has_value() || closed_ || detached_; });
  std::optional<protocol::Probes> probes = std::move(answer_);
  answer_.reset();
  return probes;
}

void Controller::wait_for_trace_at_exit() {
  std::unique_lock lock(mutex_);
  if (!socket_ || closed_ || detached_ || exit_let_go_) return;
  {
    std::lock_guard send_lock(send_mutex_);
    const int socket = checked_socket();
    if (socket < 0 || !protocol::send_message(socket, protocol::MessageType::kExiting, {})) return;
  }
  // No time limit: the CLI writes at the pace of its reader, as it would
  // with the program's exit behind it; if it dies, the channel closes.
  answered_.wait(lock, [&] { return closed_ || detached_ || exit_let_go_; });
}

void Controller::send_report(const protocol::ArmReport& report) {
  std::lock_guard lock(send_mutex_);
  const int socket = checked_socket();
  if (socket >= 0)
    (void)protocol::send_message(socket, protocol::MessageType::kArmReport, encode(report));
}

int Controller::checked_socket() {
  if (socket_ && socket_->intact()) return socket_->fd();
  return -1;
}

}  // namespace dprobe::agent
