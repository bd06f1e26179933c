// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The program's actions for the signals the agent holds, and the action the
// kernel has installed for them (the agent's handler, mirroring what the
// kernel takes from the program's action: SA_ONSTACK, SA_RESTART and the
// sa_mask, so that the right stack is used, the right system calls restart,
// and the mask is applied atomically at delivery).
//
// Written by the program's sigaction() (any thread, also from a handler)
// and by a delivery with SA_RESETHAND; read by the handlers of every
// thread. A writer blocks every signal on its thread and takes the slot's
// sequence to odd; readers retry while it is odd or changed (a seqlock).
// No allocation, no libc: async-signal-safe. A writer cannot be
// interrupted on its own thread, and no breakpoint or fault can be in
// these few lines of agent code, so the spin is always on another thread,
// which is running.
#ifndef DPROBE_AGENT_SIGNAL_TABLE_H_
#define DPROBE_AGENT_SIGNAL_TABLE_H_

#include <cstdint>

#include "agent/kernel_signal.h"
#include "agent/signal_action.h"

namespace dprobe::agent {

struct RecordedAction {
  ProgramAction action;
  void* handler = nullptr;  // the function when action.disposition is kHandler
};

// Index 0..3 for SIGTRAP, SIGSEGV, SIGBUS, SIGSYS; -1 for the others.
int held_index(int sig);

// The agent's handler and the restorer every delivery returns through.
void set_agent_handler(void (*handler)(int, siginfo_t*, void*), void* restorer);
void* agent_restorer();

// The program's action for a held signal, and the version it was read at.
RecordedAction read_action(int sig, uint32_t* version = nullptr);

// Records the program's new action (if any), gives the old one back, and
// installs the agent's handler to mirror it. False if the kernel refused.
bool write_action(int sig, const RecordedAction* next, RecordedAction* old);

// SA_RESETHAND: the action read at `version` becomes SIG_DFL (flags and
// mask kept, as the kernel does), unless the program changed it since.
void reset_to_default(int sig, uint32_t version);

// What the kernel has installed for `sig` is the agent's handler.
bool agent_handler_installed(int sig);

// Conversions between the C library's struct sigaction and the record.
RecordedAction from_sigaction(const struct sigaction& action);
void to_sigaction(const RecordedAction& recorded, struct sigaction& action);
RecordedAction from_kernel(const KernelSigaction& action);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_SIGNAL_TABLE_H_
