// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Following the dynamic loader, as a debugger does: the agent's own probe
// on the function the loader calls at every change of its object list
// (r_debug.r_brk, glibc's _dl_debug_state). Probes on an object that is
// not loaded yet wait in the CLI; when the loader has mapped and relocated
// a new object (RT_CONSISTENT after RT_ADD) and before any of its code has
// run, constructors included, the CLI is asked for its probes and they are
// armed. When objects are about to be unmapped (RT_DELETE) the probes of
// every object loaded after start are disarmed, and at the next
// RT_CONSISTENT those of the ones that went are forgotten and the others
// armed again.
#ifndef DPROBE_AGENT_LOADER_WATCH_H_
#define DPROBE_AGENT_LOADER_WATCH_H_

#include "core/probe_registry.h"

namespace dprobe::agent {

// Puts the loader probe in; the objects mapped now are the start-up ones.
bool watch_loader(core::ProbeRegistry& registry);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_LOADER_WATCH_H_
