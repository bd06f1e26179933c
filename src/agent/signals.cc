// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/signals.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "agent/hit.h"
#include "arch/runtime/safe_memory.h"

namespace dprobe::agent {
namespace {

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
using SignalFn = sighandler_t (*)(int, sighandler_t);

SigactionFn g_real_sigaction = nullptr;
SignalFn g_real_signal = nullptr;
std::atomic<bool> g_guarding{false};

// The program's own actions for the signals the agent holds.
struct sigaction g_program[3];

int guarded_index(int sig) {
  switch (sig) {
    case SIGTRAP:
      return 0;
    case SIGSEGV:
      return 1;
    case SIGBUS:
      return 2;
    default:
      return -1;
  }
}

// A synchronous signal the program ignores or leaves to the default: put
// the default back and let the kernel do what it would have done.
void take_default(int sig) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  g_real_sigaction(sig, &dfl, nullptr);
  // A fault repeats when the handler returns; a breakpoint trap has
  // already passed, so it is raised again.
  if (sig == SIGTRAP) ::syscall(SYS_tgkill, ::getpid(), ::syscall(SYS_gettid), sig);
}

void pass_on(int sig, siginfo_t* info, void* context) {
  const struct sigaction& action = g_program[guarded_index(sig)];
  if ((action.sa_flags & SA_SIGINFO) != 0 && action.sa_sigaction != nullptr) {
    action.sa_sigaction(sig, info, context);
  } else if (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN) {
    take_default(sig);
  } else {
    action.sa_handler(sig);
  }
}

// SI_KERNEL: what an int3 reports on x86_64 (a raise() or kill() says
// otherwise, and is never ours).
bool is_breakpoint_trap(const siginfo_t* info) { return info->si_code == SI_KERNEL; }

void on_trap(int sig, siginfo_t* info, void* context) {
  auto& uc = *static_cast<ucontext_t*>(context);
  if (is_breakpoint_trap(info)) {
    if (handle_breakpoint(uc) || rewind_removed_breakpoint(uc)) return;
  }
  pass_on(sig, info, context);
}

void on_fault(int sig, siginfo_t* info, void* context) {
  // si_code > 0: raised by the kernel for a fault, not sent by kill().
  if (info->si_code > 0 && arch::fixup_memory_fault(context)) return;
  pass_on(sig, info, context);
}

bool install(int sig, void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction action {};
  action.sa_sigaction = handler;
  // SA_NODEFER: a breakpoint hit inside a handler (a probed function the
  // handler uses) must trap again and be turned away, not kill the process
  // as a blocked synchronous signal would.
  action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
  sigemptyset(&action.sa_mask);
  return g_real_sigaction(sig, &action, &g_program[guarded_index(sig)]) == 0;
}

}  // namespace

bool install_signal_handlers() {
  g_real_sigaction = reinterpret_cast<SigactionFn>(::dlsym(RTLD_NEXT, "sigaction"));
  g_real_signal = reinterpret_cast<SignalFn>(::dlsym(RTLD_NEXT, "signal"));
  if (g_real_sigaction == nullptr) return false;
  const bool ok =
      install(SIGTRAP, on_trap) && install(SIGSEGV, on_fault) && install(SIGBUS, on_fault);
  g_guarding.store(ok);
  return ok;
}

uint64_t signal_restorer_address() {
  // The kernel's view of the action holds the restorer the C library set.
  struct KernelSigaction {
    void* handler;
    unsigned long flags;
    void* restorer;
    uint64_t mask;
  } action{};
  if (::syscall(SYS_rt_sigaction, SIGTRAP, nullptr, &action, sizeof(uint64_t)) != 0) return 0;
  return reinterpret_cast<uint64_t>(action.restorer);
}

}  // namespace dprobe::agent

// The program's calls, for the signals the agent holds, change what the
// agent passes on to, not the installed handler.
extern "C" int sigaction(int sig, const struct sigaction* action, struct sigaction* old) {
  using namespace dprobe::agent;
  const int index = guarded_index(sig);
  if (index < 0 || !g_guarding.load()) {
    if (g_real_sigaction == nullptr) {
      g_real_sigaction = reinterpret_cast<SigactionFn>(::dlsym(RTLD_NEXT, "sigaction"));
    }
    return g_real_sigaction(sig, action, old);
  }
  if (old != nullptr) *old = g_program[index];
  if (action != nullptr) g_program[index] = *action;
  return 0;
}

extern "C" sighandler_t signal(int sig, sighandler_t handler) {
  using namespace dprobe::agent;
  const int index = guarded_index(sig);
  if (index < 0 || !g_guarding.load()) {
    if (g_real_signal == nullptr)
      g_real_signal = reinterpret_cast<SignalFn>(::dlsym(RTLD_NEXT, "signal"));
    return g_real_signal(sig, handler);
  }
  const sighandler_t previous = g_program[index].sa_handler;
  g_program[index] = {};
  g_program[index].sa_handler = handler;
  g_program[index].sa_flags = SA_RESTART;  // BSD semantics, as glibc's signal()
  return previous;
}
