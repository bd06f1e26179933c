// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Placing the probes the CLI sends: each event is kept (once, by id), each
// probe added to the registry (armed at once when the registry is live),
// and the outcome of every one reported back.
#ifndef DPROBE_AGENT_ARMING_H_
#define DPROBE_AGENT_ARMING_H_

#include "protocol/messages.h"

namespace dprobe::agent {

// Whether the objects the probes are in have been relocated: at start-up
// and at attach they have; objects the loader has just mapped (its
// notification comes before it relocates them) have not, and their IFUNC
// resolvers cannot run yet.
enum class Objects { kRelocated, kJustMapped };

// Takes the registry's writer lock. Probes that fail are left out; the
// report says why.
protocol::ArmReport add_probes(const protocol::Probes& probes, Objects objects);

// The system call events (and --summary): kept, and the dispatch made
// ready for the threads to turn on (syscall_dispatch.h); each reported
// armed, or refused where the kernel has no Syscall User Dispatch.
void add_syscall_events(const protocol::Probes& probes, protocol::ArmReport& report);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_ARMING_H_
