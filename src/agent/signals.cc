// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/signals.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "agent/agent_state.h"
#include "agent/hit.h"
#include "arch/runtime/context.h"
#include "arch/runtime/safe_memory.h"

namespace dprobe::agent {
namespace {

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

SigactionFn g_real_sigaction = nullptr;
std::atomic<bool> g_holding{false};

// The program's own actions for the signals the agent holds.
struct sigaction g_program[3];

int held_index(int sig) {
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
  real_sigaction(sig, &dfl, nullptr);
  // A fault repeats when the handler returns; a breakpoint trap has
  // already passed, so it is raised again.
  if (sig == SIGTRAP) ::syscall(SYS_tgkill, ::getpid(), ::syscall(SYS_gettid), sig);
}

void pass_on(int sig, siginfo_t* info, void* context) {
  const struct sigaction& action = g_program[held_index(sig)];
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

// A fault of an instruction run out of line shows the program the address
// the instruction came from, as if it had run in place.
void point_back_to_original(ucontext_t& context) {
  AgentState& state = agent_state();
  if (!state.registry) return;
  const core::ProbeRegistry::Reader reader(*state.registry);
  if (const core::Probe* probe = reader.find_by_slot(arch::context_pc(context))) {
    arch::set_context_pc(context, probe->address);
  }
}

void on_fault(int sig, siginfo_t* info, void* context) {
  // si_code > 0: raised by the kernel for a fault, not sent by kill().
  if (info->si_code > 0 && arch::fixup_memory_fault(context)) return;
  point_back_to_original(*static_cast<ucontext_t*>(context));
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
  return real_sigaction(sig, &action, &g_program[held_index(sig)]) == 0;
}

}  // namespace

int real_sigaction(int sig, const struct sigaction* action, struct sigaction* old) {
  if (g_real_sigaction == nullptr) {
    g_real_sigaction = reinterpret_cast<SigactionFn>(::dlsym(RTLD_NEXT, "sigaction"));
    if (g_real_sigaction == nullptr) return -1;
  }
  return g_real_sigaction(sig, action, old);
}

bool install_signal_handlers() {
  const bool ok =
      install(SIGTRAP, on_trap) && install(SIGSEGV, on_fault) && install(SIGBUS, on_fault);
  g_holding.store(ok);
  return ok;
}

bool is_held_signal(int sig) { return held_index(sig) >= 0 && g_holding.load(); }

void program_action(int sig, const struct sigaction* action, struct sigaction* old) {
  const int index = held_index(sig);
  if (old != nullptr) *old = g_program[index];
  if (action != nullptr) g_program[index] = *action;
}

void unblock_held(sigset_t& set) {
  if (!g_holding.load()) return;
  sigdelset(&set, SIGTRAP);
  sigdelset(&set, SIGSEGV);
  sigdelset(&set, SIGBUS);
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
