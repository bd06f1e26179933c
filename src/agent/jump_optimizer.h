// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the probe registry's jump optimization needs from the process
// around it (core::OptimizeEnv): the trampolines' hit handler, the landing
// pads of a function (from the object's unwind tables), the census that
// keeps the other threads out of displaced bytes (thread_census.h), and a way to serialize every
// core after code changes. Then optimize_armed() asks for it where the session wants it.
//
//   if (probes.optimize) optimize_armed(0, UINT64_MAX);
//   report.states = probe_states(0, UINT64_MAX);
#ifndef DPROBE_AGENT_JUMP_OPTIMIZER_H_
#define DPROBE_AGENT_JUMP_OPTIMIZER_H_

#include <cstdint>
#include <vector>

#include "protocol/messages.h"

namespace dprobe::agent {

// Once per session: whether probes are optimized (--no-optimize says no).
// Registers with membarrier the first time; if the kernel cannot serialize
// cores for us, nothing is optimized.
void set_optimization(bool wanted);

// Serializes every core (so that the breakpoints just armed are seen
// everywhere), then turns the armed probes of [begin, end) into jumps
// where safe. Takes the registry's writer lock.
void optimize_armed(uint64_t begin, uint64_t end);

// Called now and then (the controller's loop): probes kept breakpoints
// because of where a thread was are tried again, 100 ms after, then at
// doubling intervals up to 2 s, 10 times in all; each new refusal, and
// restart_optimize_again (attached, once the CLI has let the thread that
// loaded the agent go on), starts the schedule over. Nothing is tried
// while that thread is still held. Takes the writer lock when a try is due.
void optimize_again_when_due();
void restart_optimize_again();

// How each armed probe of [begin, end) is armed, for the CLI.
std::vector<core::ProbeState> probe_states(uint64_t begin, uint64_t end);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_JUMP_OPTIMIZER_H_
