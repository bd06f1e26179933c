// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C library functions the agent stands in front of, so that the program's
// use of them cannot take the probes away, and sees what it would see
// untraced:
//   - sigaction(), signal(): for SIGTRAP, SIGSEGV and SIGBUS they change
//     what the agent hands on to (signals.h), not the installed handler;
//     no handler may block those signals for real while it runs;
//   - sigprocmask(), pthread_sigmask(): those signals are never blocked for
//     real (a breakpoint trap while SIGTRAP is blocked kills the process):
//     the thread's view keeps them blocked; sigpending(), sigtimedwait(),
//     sigwaitinfo(), sigwait() and sigsuspend() see the ones kept pending;
//   - prctl(PR_SET_NAME), pthread_setname_np(): a renamed thread's trace
//     lines and $comm follow the new name;
//   - prctl(PR_SET_SECCOMP), syscall(SYS_seccomp): a sandbox is coming,
//     after which no hit may ask the kernel anything (thread_trace.h);
//   - backtrace(): the return stubs of live return probes stand between a
//     hijacked frame and its caller; they are taken out of the result.
// They are exported from the otherwise hidden agent, so that they
// interpose. The program calls them, so they may call the C library's
// function (the program would have); they find it in the table resolved
// at start-up (interpose.h), never by a lookup of their own.
#include "agent/interpose.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cstdlib>

#include "agent/agent.h"
#include "agent/held_directories.h"
#include "agent/hit/return_probes.h"
#include "agent/hit/syscall_hit.h"
#include "agent/hit/thread_trace.h"
#include "agent/kernel_signal.h"
#include "agent/signals.h"
#include "arch/runtime/raw_syscall.h"
#include "protocol/startup_marker.h"

#define DPROBE_EXPORT extern "C" __attribute__((visibility("default")))

namespace dprobe::agent {
namespace {

LibcFunctions g_libc{};

template <typename Fn>
bool find(Fn& slot, const char* name) {
  if (slot == nullptr) slot = next_function<Fn>(name);
  return slot != nullptr;
}

// First of the agent's constructors: before it arms anything. (Objects the
// program links initialize before the preloaded agent and may call an
// interposer earlier: libc() resolves then, with nothing armed yet.)
//
// In a program `dprobe run` started, its first system call is the marker
// that ends the collector's view of the start-up calls: what follows is
// the agent's work (protocol/startup_marker.h).
__attribute__((constructor(101))) void resolve_at_load() {
  const AgentWork work;
  if (std::getenv(kControlEnv) != nullptr) {
    arch::raw_syscall(SYS_prctl, protocol::kStartupMarkerOption, protocol::kStartupMarkerMode,
                      protocol::kStartupMarkerMagic, 0, 0);
  }
  resolve_libc_functions();
}

const LibcFunctions& libc() {
  if (g_libc.backtrace == nullptr) resolve_libc_functions();
  return g_libc;
}

}  // namespace

void* next_symbol(const char* name) {
  const AgentWork work;
  return ::dlsym(RTLD_NEXT, name);
}

bool resolve_libc_functions() {
  LibcFunctions& f = g_libc;
  // Every one looked up, whatever is missing.
  const bool found[] = {
      find(f.sigaction, "sigaction"),
      find(f.sigprocmask, "sigprocmask"),
      find(f.pthread_sigmask, "pthread_sigmask"),
      find(f.sigpending, "sigpending"),
      find(f.sigtimedwait, "sigtimedwait"),
      find(f.sigwaitinfo, "sigwaitinfo"),
      find(f.sigwait, "sigwait"),
      find(f.sigsuspend, "sigsuspend"),
      find(f.prctl, "prctl"),
      find(f.pthread_setname_np, "pthread_setname_np"),
      find(f.sigaltstack, "sigaltstack"),
      find(f.syscall, "syscall"),
      find(f.backtrace, "backtrace"),  // last: its presence says the table is complete
  };
  for (const bool one : found) {
    if (!one) return false;
  }
  return true;
}

const LibcFunctions& libc_functions() { return libc(); }

}  // namespace dprobe::agent

namespace {

using dprobe::agent::libc;

// A handler's own mask is cleared of the held signals too.
struct sigaction without_held_in_mask(const struct sigaction& action) {
  struct sigaction copy = action;
  dprobe::agent::unblock_held(copy.sa_mask);
  return copy;
}

// The interposer's body, called by name from within the agent too: a call
// to `sigaction` from here could bind to the C library's when the agent was
// loaded by dlopen (attach), not preloaded.
//
// For a held signal the agent answers: the program's rt_sigaction is
// recorded and counted as the kernel would have seen it, at `call_site`.
int interposed_sigaction(int sig, const struct sigaction* action, struct sigaction* old,
                         void* call_site) {
  using namespace dprobe::agent;
  if (is_held_signal(sig)) {
    const int result = program_action(sig, action, old);
    const uint64_t args[] = {static_cast<uint64_t>(sig), reinterpret_cast<uint64_t>(action),
                             reinterpret_cast<uint64_t>(old), sizeof(SignalMask)};
    dispatch::record_answered_call(SYS_rt_sigaction, args, result == 0 ? 0 : -errno,
                                   reinterpret_cast<uint64_t>(call_site), /*returns=*/true);
    return result;
  }
  if (action == nullptr) return libc().sigaction(sig, action, old);
  const struct sigaction adjusted = without_held_in_mask(*action);
  return libc().sigaction(sig, &adjusted, old);
}

// Whether a wait is for a held signal: only those need the agent.
bool waits_for_held(const sigset_t* set) {
  using namespace dprobe::agent;
  return set != nullptr && is_held_signal(SIGTRAP) && (to_kernel_mask(*set) & kHeld) != 0;
}

}  // namespace

DPROBE_EXPORT int sigaction(int sig, const struct sigaction* action, struct sigaction* old) {
  return interposed_sigaction(sig, action, old, __builtin_return_address(0));
}

DPROBE_EXPORT sighandler_t signal(int sig, sighandler_t handler) {
  // As glibc's signal(): BSD semantics, the handler stays and restarts calls.
  struct sigaction action {};
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  struct sigaction old {};
  if (interposed_sigaction(sig, &action, &old, __builtin_return_address(0)) != 0) return SIG_ERR;
  return old.sa_handler;
}

DPROBE_EXPORT int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
  return dprobe::agent::program_sigmask(libc().sigprocmask, how, set, old);
}

DPROBE_EXPORT int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
  return dprobe::agent::program_sigmask(libc().pthread_sigmask, how, set, old);
}

DPROBE_EXPORT int sigpending(sigset_t* set) {
  const int result = libc().sigpending(set);
  if (result == 0 && dprobe::agent::is_held_signal(SIGTRAP)) dprobe::agent::add_kept_pending(*set);
  return result;
}

DPROBE_EXPORT int sigtimedwait(const sigset_t* set, siginfo_t* info,
                               const struct timespec* timeout) {
  if (!waits_for_held(set)) return libc().sigtimedwait(set, info, timeout);
  return dprobe::agent::wait_for_signal(*set, info, timeout);
}

DPROBE_EXPORT int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
  if (!waits_for_held(set)) return libc().sigwaitinfo(set, info);
  return dprobe::agent::wait_for_signal(*set, info, nullptr);
}

DPROBE_EXPORT int sigwait(const sigset_t* set, int* sig) {
  if (!waits_for_held(set)) return libc().sigwait(set, sig);
  // sigwait() returns the error number and waits on through EINTR.
  int result;
  do {
    result = dprobe::agent::wait_for_signal(*set, nullptr, nullptr);
  } while (result < 0 && errno == EINTR);
  if (result < 0) return errno;
  *sig = result;
  return 0;
}

DPROBE_EXPORT int sigsuspend(const sigset_t* mask) {
  if (!dprobe::agent::is_held_signal(SIGTRAP)) return libc().sigsuspend(mask);
  return dprobe::agent::suspend_with(*mask);
}

DPROBE_EXPORT int prctl(int option, ...) {
  va_list ap;
  va_start(ap, option);
  unsigned long args[4];
  for (unsigned long& arg : args) arg = va_arg(ap, unsigned long);
  va_end(ap);
  if (option == PR_SET_SECCOMP) dprobe::agent::before_sandbox();
  const int result = libc().prctl(option, args[0], args[1], args[2], args[3]);
  if (option == PR_SET_NAME && result == 0) dprobe::agent::thread_renamed();
  return result;
}

// Sandboxes install their filter through syscall(SYS_seccomp) too (glibc
// has no seccomp()): as prctl(PR_SET_SECCOMP), the agent is told first.
DPROBE_EXPORT long syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  long args[6];
  for (long& arg : args) arg = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_seccomp) dprobe::agent::before_sandbox();
  // A new root (a container runtime's): the agent's paths reach nothing
  // from there, its directories are held first (held_directories.h).
  if (number == SYS_pivot_root || number == SYS_chroot) dprobe::agent::hold_directories_now();
  return libc().syscall(number, args[0], args[1], args[2], args[3], args[4], args[5]);
}

DPROBE_EXPORT int pthread_setname_np(pthread_t thread, const char* name) {
  const int result = libc().pthread_setname_np(thread, name);
  if (result == 0) dprobe::agent::thread_renamed();
  return result;
}

// The calling thread's signal stack is cached for return probes (an
// optimized hit has no signal context that tells it): a change is news.
DPROBE_EXPORT int sigaltstack(const stack_t* stack, stack_t* old) {
  const int result = libc().sigaltstack(stack, old);
  if (result == 0 && stack != nullptr) {
    dprobe::agent::signal_stack_changed();
    dprobe::agent::note_own_signal_stack(*stack);
  }
  return result;
}

DPROBE_EXPORT int backtrace(void** buffer, int size) {
  // One more than asked, for this wrapper's own frame, which comes first.
  constexpr int kMost = 256;
  void* found[kMost + 1];
  // Ask for the most, whatever `size`: stubs taken out leave room for more.
  const int count = libc().backtrace(found, kMost + 1);
  int kept = 0;
  for (int i = 1; i < count && kept < size; ++i) {
    if (!dprobe::agent::is_return_stub(reinterpret_cast<uint64_t>(found[i]))) {
      buffer[kept++] = found[i];
    }
  }
  return kept;
}
