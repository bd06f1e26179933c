// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe run` leaves the process the shell started to the program and
// writes the trace from a process beside it (cli/process/launcher.h).
// Whoever waits for the program (a shell, make, a supervisor) must find the
// trace complete once it has ended, so the exit of that process waits for
// it (protocol::Probes::hold_exit). The wait is at the very end: the C
// library's _exit, which exit() calls after the program's exit handlers,
// the libraries' destructors and the flush of stdio, is sent to the agent
// (its entry written over with a jump), which tells the CLI, waits until
// the trace is written, and makes the exit_group itself (recorded as the
// program's when its system calls are traced). A death by a signal cannot
// wait: the CLI writes the rest as soon as it sees the process gone.
//
//   if (probes.hold_exit) install_exit_hold(registry);   // registry's writer lock held
#ifndef DPROBE_AGENT_EXIT_HOLD_H_
#define DPROBE_AGENT_EXIT_HOLD_H_

#include "core/probe_registry.h"

namespace dprobe::agent {

// Sends the C library's _exit to the agent, once per program image; no
// probe may go on it from then on. False when it could not be done (the
// program then exits without waiting).
bool install_exit_hold(core::ProbeRegistry& registry);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_EXIT_HOLD_H_
