// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's signal handler, for SIGTRAP (its breakpoints) and SIGSEGV and
// SIGBUS (faults of its fault-safe reads and of instructions run out of
// line). The program keeps its say over these signals: its sigaction(),
// signal() and mask calls are interposed (interpose.cc) and recorded
// (signal_table.h, signal_thread.h), and every signal that is not the
// agent's is handed on exactly as the kernel would have (signal_action.h).
// The whole path speaks to the kernel directly: every libc function may
// carry a probe.
#ifndef DPROBE_AGENT_SIGNALS_H_
#define DPROBE_AGENT_SIGNALS_H_

#include <signal.h>
#include <time.h>

#include <cstdint>

namespace dprobe::agent {

// Installs the handler; the program's earlier actions become the ones
// handed on to. Once per process.
bool install_signal_handlers();

// Whether the kernel still has the agent's handler for every held signal.
// A program that replaced it with the raw rt_sigaction system call (Go's
// runtime does) is noticed here: its action is taken as the program's and
// the agent's handler put back. False when something had to be repaired.
bool check_signal_handlers();

// The signal return trampoline the kernel sends handlers back through: a
// probe there would break every signal delivery.
uint64_t signal_restorer_address();

// Whether the agent holds `sig` (SIGTRAP, SIGSEGV, SIGBUS) now.
bool is_held_signal(int sig);
// The program's own action for a held signal: read it, and set it.
// 0, or -1 with errno set.
int program_action(int sig, const struct sigaction* action, struct sigaction* old);

// The program's mask calls: `real` is the C library's function (called
// with the held signals taken out of the set, as the program would have
// called it); the held ones are kept in the thread's view. Returns what
// `real` returned.
using MaskFn = int (*)(int, const sigset_t*, sigset_t*);
int program_sigmask(MaskFn real, int how, const sigset_t* set, sigset_t* old);
// sigpending(): the kernel's set and the held signals kept pending.
void add_kept_pending(sigset_t& set);
// sigtimedwait() for a set with held signals in it (timeout may be null):
// the signal's number, or -1 with errno set.
int wait_for_signal(const sigset_t& set, siginfo_t* info, const struct timespec* timeout);
// sigsuspend(): -1 with errno EINTR once a handler ran.
int suspend_with(const sigset_t& mask);

// Removes the held signals from a mask the program is about to install
// for real (a handler's sa_mask).
void unblock_held(sigset_t& set);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_SIGNALS_H_
