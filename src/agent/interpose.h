// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The C library's functions behind the agent's interposers (interpose.cc),
// found once, at start-up: never in an interposer or a handler. dlsym with
// RTLD_NEXT finds "the next object" from its caller's return address, and
// a return probe on dlsym replaces that address with a stub: a lazy lookup
// under `r libc.so.6:*` returns NULL.
#ifndef DPROBE_AGENT_INTERPOSE_H_
#define DPROBE_AGENT_INTERPOSE_H_

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace dprobe::agent {

struct LibcFunctions {
  int (*sigaction)(int, const struct sigaction*, struct sigaction*);
  int (*sigprocmask)(int, const sigset_t*, sigset_t*);
  int (*pthread_sigmask)(int, const sigset_t*, sigset_t*);
  int (*sigpending)(sigset_t*);
  int (*sigtimedwait)(const sigset_t*, siginfo_t*, const struct timespec*);
  int (*sigwaitinfo)(const sigset_t*, siginfo_t*);
  int (*sigwait)(const sigset_t*, int*);
  int (*sigsuspend)(const sigset_t*);
  int (*prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
  int (*pthread_setname_np)(pthread_t, const char*);
  int (*sigaltstack)(const stack_t*, stack_t*);
  long (*syscall)(long, ...);
  int (*backtrace)(void**, int);
};

// Looks every function up; true when all were found. Run by the agent's
// first constructor and again by its start-up (idempotent).
bool resolve_libc_functions();
const LibcFunctions& libc_functions();

// The definition of `name` after the agent's (dlsym's RTLD_NEXT), the C
// library's behind an interposer; looked up as the agent's own work, which
// a probe on dlsym does not count.
void* next_symbol(const char* name);
template <typename Fn>
Fn next_function(const char* name) {
  return reinterpret_cast<Fn>(next_symbol(name));
}

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_INTERPOSE_H_
