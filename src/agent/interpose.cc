// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C library functions the agent stands in front of, so that the program's
// use of them cannot take the probes away:
//   - sigaction(), signal(): for SIGTRAP, SIGSEGV and SIGBUS they change
//     what the agent passes on to, not the installed handler; and no handler
//     may block those signals while it runs;
//   - sigprocmask(), pthread_sigmask(): those signals are never blocked (a
//     breakpoint trap while SIGTRAP is blocked kills the process);
//   - prctl(PR_SET_NAME), pthread_setname_np(): a renamed thread's trace
//     lines and $comm follow the new name;
//   - backtrace(): the return stubs of live return probes stand between a
//     hijacked frame and its caller; they are taken out of the result.
// They are exported from the otherwise hidden agent, so that they
// interpose. Each calls the next definition (RTLD_NEXT) for the rest.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>

#include "agent/return_probes.h"
#include "agent/signals.h"
#include "agent/thread_trace.h"

#define DPROBE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

template <typename Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

// A handler's own mask is cleared of the held signals too.
struct sigaction without_held_in_mask(const struct sigaction& action) {
  struct sigaction copy = action;
  dprobe::agent::unblock_held(copy.sa_mask);
  return copy;
}

// The interposer's body, called by name from within the agent too: a call
// to `sigaction` from here could bind to the C library's when the agent was
// loaded by dlopen (attach), not preloaded.
int interposed_sigaction(int sig, const struct sigaction* action, struct sigaction* old) {
  using namespace dprobe::agent;
  if (is_held_signal(sig)) {
    program_action(sig, action, old);
    return 0;
  }
  if (action == nullptr) return real_sigaction(sig, action, old);
  const struct sigaction adjusted = without_held_in_mask(*action);
  return real_sigaction(sig, &adjusted, old);
}

}  // namespace

DPROBE_EXPORT int sigaction(int sig, const struct sigaction* action, struct sigaction* old) {
  return interposed_sigaction(sig, action, old);
}

DPROBE_EXPORT sighandler_t signal(int sig, sighandler_t handler) {
  // As glibc's signal(): BSD semantics, the handler stays and restarts calls.
  struct sigaction action {};
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  struct sigaction old {};
  if (interposed_sigaction(sig, &action, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

DPROBE_EXPORT int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
  using Fn = int (*)(int, const sigset_t*, sigset_t*);
  static const Fn real = next<Fn>("sigprocmask");
  if (set == nullptr || how == SIG_UNBLOCK) return real(how, set, old);
  sigset_t adjusted = *set;
  dprobe::agent::unblock_held(adjusted);
  return real(how, &adjusted, old);
}

DPROBE_EXPORT int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
  using Fn = int (*)(int, const sigset_t*, sigset_t*);
  static const Fn real = next<Fn>("pthread_sigmask");
  if (set == nullptr || how == SIG_UNBLOCK) return real(how, set, old);
  sigset_t adjusted = *set;
  dprobe::agent::unblock_held(adjusted);
  return real(how, &adjusted, old);
}

DPROBE_EXPORT int prctl(int option, ...) {
  using Fn = int (*)(int, unsigned long, unsigned long, unsigned long, unsigned long);
  static const Fn real = next<Fn>("prctl");
  va_list ap;
  va_start(ap, option);
  unsigned long args[4];
  for (unsigned long& arg : args) arg = va_arg(ap, unsigned long);
  va_end(ap);
  const int result = real(option, args[0], args[1], args[2], args[3]);
  if (option == PR_SET_NAME && result == 0) dprobe::agent::thread_renamed();
  return result;
}

DPROBE_EXPORT int pthread_setname_np(pthread_t thread, const char* name) {
  using Fn = int (*)(pthread_t, const char*);
  static const Fn real = next<Fn>("pthread_setname_np");
  const int result = real(thread, name);
  if (result == 0) dprobe::agent::thread_renamed();
  return result;
}

DPROBE_EXPORT int backtrace(void** buffer, int size) {
  using Fn = int (*)(void**, int);
  static const Fn real = next<Fn>("backtrace");
  // One more than asked, for this wrapper's own frame, which comes first.
  constexpr int kMost = 256;
  void* found[kMost + 1];
  // Ask for the most, whatever `size`: stubs taken out leave room for more.
  const int count = real(found, kMost + 1);
  int kept = 0;
  for (int i = 1; i < count && kept < size; ++i) {
    if (!dprobe::agent::is_return_stub(reinterpret_cast<uint64_t>(found[i]))) {
      buffer[kept++] = found[i];
    }
  }
  return kept;
}
