// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The speed half of system call tracing: each syscall instruction that
// brought a SIGSYS (syscall_dispatch.h) is made, once, into a jump to a
// trampoline of its own that calls the agent around the syscall (the
// manner of lazypoline: correctness from the dispatch, speed from the
// rewriting). The same live patching as a jump-optimized probe (a
// breakpoint first, the other threads kept out, the jump's tail, then its
// first byte), through the probe registry, which takes the site back out
// at the end of the session. A site that cannot be rewritten (no unwind
// tables to bound its function, a branch into the instructions before it,
// the vDSO, code the agent may not touch) stays on the dispatch.
#ifndef DPROBE_AGENT_SYSCALL_SITES_H_
#define DPROBE_AGENT_SYSCALL_SITES_H_

namespace dprobe::agent {

// Rewrites the sites seen since the last call. From the agent's own
// thread, never from a handler: it maps memory and waits for the threads.
void rewrite_syscall_sites();

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_SYSCALL_SITES_H_
