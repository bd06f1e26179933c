// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's interposers (interpose.cc, exec.cc) stand in front of the C
// library because LD_PRELOAD puts the agent first in the search order.
// Loaded by dlopen into a running process (attach), it comes too late: the
// program's objects are bound to the C library's functions already. So
// each object's GOT entries for those functions are pointed at the agent's,
// as the loader would have bound them with the agent preloaded; objects
// loaded later are bound when the loader reports them.
//
//   if (attached) bind_interposers();   // at attach, and after each dlopen
#ifndef DPROBE_AGENT_BIND_INTERPOSERS_H_
#define DPROBE_AGENT_BIND_INTERPOSERS_H_

namespace dprobe::agent {

// After attach: every object's calls to an interposed function go to the
// agent from now on. Idempotent. Each entry is one atomic store (threads
// may be calling through it); called with the loader's lock held (the
// attach hook, the loader's notification), so never twice at once.
void bind_interposers();

// Whether the agent came by dlopen (attach) rather than LD_PRELOAD.
bool loaded_late();
void set_loaded_late();

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_BIND_INTERPOSERS_H_
