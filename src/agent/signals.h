// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's signal handlers: SIGTRAP for the breakpoints, SIGSEGV and
// SIGBUS for faults of its own fault-safe reads. The program keeps its say
// over these signals: its sigaction()/signal() calls are interposed and
// recorded, and what is not the agent's is passed to the program's handler
// (or to the default action) exactly as if the agent were not there.
#ifndef DPROBE_AGENT_SIGNALS_H_
#define DPROBE_AGENT_SIGNALS_H_

#include <cstdint>

namespace dprobe::agent {

// Installs the handlers; the program's earlier actions become the ones
// passed on to. False if the C library's sigaction cannot be found.
bool install_signal_handlers();

// The signal return trampoline the kernel sends handlers back through: a
// probe there would break every signal delivery.
uint64_t signal_restorer_address();

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_SIGNALS_H_
