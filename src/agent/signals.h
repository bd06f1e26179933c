// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's signal handlers: SIGTRAP for the breakpoints, SIGSEGV and
// SIGBUS for faults of its own fault-safe reads. The program keeps its say
// over these signals: its sigaction()/signal() calls are interposed
// (interpose.cc) and recorded here, and what is not the agent's is passed to
// the program's handler, or to the default action, as if the agent were not
// there.
#ifndef DPROBE_AGENT_SIGNALS_H_
#define DPROBE_AGENT_SIGNALS_H_

#include <signal.h>

#include <cstdint>

namespace dprobe::agent {

// Installs the handlers; the program's earlier actions become the ones
// passed on to. False if the C library's sigaction cannot be found.
bool install_signal_handlers();

// The signal return trampoline the kernel sends handlers back through: a
// probe there would break every signal delivery.
uint64_t signal_restorer_address();

// Whether the agent holds `sig` (SIGTRAP, SIGSEGV, SIGBUS) now.
bool is_held_signal(int sig);
// The program's own action for a held signal: read it, and set it.
void program_action(int sig, const struct sigaction* action, struct sigaction* old);

// The C library's functions behind the interposed ones.
int real_sigaction(int sig, const struct sigaction* action, struct sigaction* old);

// Removes the held signals from a mask the program is about to block: a
// breakpoint trap while SIGTRAP is blocked would kill the process.
void unblock_held(sigset_t& set);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_SIGNALS_H_
