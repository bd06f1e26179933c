// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What fork leaves a child of a traced process: the parent's probes armed
// in its copy of the text, a /proc/self/mem descriptor that still writes
// the parent's memory, the parent's session socket and rings, and only the
// thread that forked. The child starts over: its own descriptor, its own
// identity, no session; then either a session of its own (--follow: new
// rings, its own pid in its events) or no probes at all.
#ifndef DPROBE_AGENT_FORK_H_
#define DPROBE_AGENT_FORK_H_

namespace dprobe::agent {

// Once per process, at start-up.
void install_fork_handlers();

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_FORK_H_
