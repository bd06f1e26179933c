// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/signal_table.h"

#include <atomic>

#include "agent/syscall_dispatch.h"

namespace dprobe::agent {
namespace {

struct Slot {
  std::atomic<uint32_t> sequence{0};  // odd while written
  std::atomic<uint64_t> disposition{0};
  std::atomic<uint64_t> flags{0};
  std::atomic<uint64_t> mask{0};
  std::atomic<void*> handler{nullptr};
};

Slot g_slots[kHeldCount];
void (*g_agent_handler)(int, siginfo_t*, void*) = nullptr;
void* g_restorer = nullptr;

constexpr uint64_t kMirroredFlags = SA_ONSTACK | SA_RESTART;

// The agent's action for a program action. SA_NODEFER: a breakpoint hit in
// a handler (a probed function it calls) must trap again, not kill the
// process as a blocked trap would. The held signals never enter the mask.
// SIGSYS returns through the agent's own restorer: its rt_sigreturn must
// not be a system call the dispatch sends back as SIGSYS (syscall_dispatch.h).
KernelSigaction agent_action(int sig, const ProgramAction& program) {
  KernelSigaction action{};
  action.handler = reinterpret_cast<void*>(g_agent_handler);
  action.restorer = sig == SIGSYS ? dispatch_restorer() : g_restorer;
  // Without a restorer (arm64's C library sets none: the kernel returns
  // through the vDSO's sigreturn) SA_RESTORER would send the return to 0.
  action.flags = SA_SIGINFO | SA_NODEFER | (action.restorer != nullptr ? kSaRestorer : 0);
  if (program.disposition == Disposition::kHandler) {
    action.flags |= program.flags & kMirroredFlags;
    action.mask = program.mask & ~kHeld & ~kUnblockable;
  } else {
    // Ignored or default: the kernel would not have interrupted a system
    // call for it at all; restarting is the nearest.
    action.flags |= SA_RESTART;
  }
  return action;
}

// Every signal blocked on this thread while a slot is written: no handler
// of this thread can spin on it.
class WriteLock {
 public:
  explicit WriteLock(Slot& slot) : slot_(slot) {
    const SignalMask all = ~SignalMask{0};
    kernel_sigmask(SIG_SETMASK, &all, &saved_);
    uint32_t seen = slot_.sequence.load(std::memory_order_relaxed);
    while ((seen & 1) != 0 ||
           !slot_.sequence.compare_exchange_weak(seen, seen + 1, std::memory_order_acquire)) {
      seen = slot_.sequence.load(std::memory_order_relaxed);
    }
    version_ = seen;
  }
  ~WriteLock() {
    slot_.sequence.store(version_ + 2, std::memory_order_release);
    kernel_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;

  uint32_t version() const { return version_; }

 private:
  Slot& slot_;
  SignalMask saved_ = 0;
  uint32_t version_ = 0;
};

RecordedAction load(const Slot& slot) {
  RecordedAction recorded;
  recorded.action.disposition =
      static_cast<Disposition>(slot.disposition.load(std::memory_order_relaxed));
  recorded.action.flags = slot.flags.load(std::memory_order_relaxed);
  recorded.action.mask = slot.mask.load(std::memory_order_relaxed);
  recorded.handler = slot.handler.load(std::memory_order_relaxed);
  return recorded;
}

void store(Slot& slot, const RecordedAction& recorded) {
  slot.disposition.store(static_cast<uint64_t>(recorded.action.disposition),
                         std::memory_order_relaxed);
  slot.flags.store(recorded.action.flags, std::memory_order_relaxed);
  slot.mask.store(recorded.action.mask, std::memory_order_relaxed);
  slot.handler.store(recorded.handler, std::memory_order_relaxed);
}

bool install_mirror(int sig, const ProgramAction& program) {
  const KernelSigaction action = agent_action(sig, program);
  return !arch::raw_failed(kernel_sigaction(sig, &action, nullptr));
}

}  // namespace

int held_index(int sig) {
  switch (sig) {
    case SIGTRAP:
      return 0;
    case SIGSEGV:
      return 1;
    case SIGBUS:
      return 2;
    case SIGSYS:
      return 3;
    default:
      return -1;
  }
}

void set_agent_handler(void (*handler)(int, siginfo_t*, void*), void* restorer) {
  g_agent_handler = handler;
  g_restorer = restorer;
}

void* agent_restorer() { return g_restorer; }

RecordedAction read_action(int sig, uint32_t* version) {
  const Slot& slot = g_slots[held_index(sig)];
  while (true) {
    const uint32_t before = slot.sequence.load(std::memory_order_acquire);
    if ((before & 1) != 0) continue;
    const RecordedAction recorded = load(slot);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.sequence.load(std::memory_order_relaxed) != before) continue;
    if (version != nullptr) *version = before;
    return recorded;
  }
}

bool write_action(int sig, const RecordedAction* next, RecordedAction* old) {
  Slot& slot = g_slots[held_index(sig)];
  const WriteLock lock(slot);
  if (old != nullptr) *old = load(slot);
  if (next == nullptr) return true;
  if (!install_mirror(sig, next->action)) return false;
  store(slot, *next);
  return true;
}

void reset_to_default(int sig, uint32_t version) {
  Slot& slot = g_slots[held_index(sig)];
  const WriteLock lock(slot);
  if (lock.version() != version) return;  // the program set another action since
  RecordedAction recorded = load(slot);
  recorded.action.disposition = Disposition::kDefault;
  recorded.handler = nullptr;
  install_mirror(sig, recorded.action);
  store(slot, recorded);
}

bool agent_handler_installed(int sig) {
  KernelSigaction now{};
  if (arch::raw_failed(kernel_sigaction(sig, nullptr, &now))) return false;
  return now.handler == reinterpret_cast<void*>(g_agent_handler);
}

RecordedAction from_sigaction(const struct sigaction& action) {
  KernelSigaction kernel{};
  kernel.handler = (action.sa_flags & SA_SIGINFO) != 0
                       ? reinterpret_cast<void*>(action.sa_sigaction)
                       : reinterpret_cast<void*>(action.sa_handler);
  kernel.flags = static_cast<unsigned long>(action.sa_flags);
  kernel.mask = to_kernel_mask(action.sa_mask);
  return from_kernel(kernel);
}

RecordedAction from_kernel(const KernelSigaction& kernel) {
  RecordedAction recorded;
  recorded.action.flags = kernel.flags;
  recorded.action.mask = kernel.mask & ~kUnblockable;
  if (kernel.handler == reinterpret_cast<void*>(SIG_DFL)) {
    recorded.action.disposition = Disposition::kDefault;
  } else if (kernel.handler == reinterpret_cast<void*>(SIG_IGN)) {
    recorded.action.disposition = Disposition::kIgnore;
  } else {
    recorded.action.disposition = Disposition::kHandler;
    recorded.handler = kernel.handler;
  }
  return recorded;
}

void to_sigaction(const RecordedAction& recorded, struct sigaction& action) {
  action = {};
  switch (recorded.action.disposition) {
    case Disposition::kDefault:
      action.sa_handler = SIG_DFL;
      break;
    case Disposition::kIgnore:
      action.sa_handler = SIG_IGN;
      break;
    case Disposition::kHandler:
      action.sa_handler = reinterpret_cast<sighandler_t>(recorded.handler);
      break;
  }
  action.sa_flags = static_cast<int>(recorded.action.flags);
  set_kernel_mask(action.sa_mask, recorded.action.mask);
}

}  // namespace dprobe::agent
