// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Places checked definitions in a running process: against the objects it
// has mapped (ProcessObjects, kept from the agent's reports), every probe
// gets its run-time address, the function it lies in (for the agent's
// instruction-boundary check), whether it names an IFUNC (the agent then
// probes the implementation the resolver picks, known only in the
// process), and fetch programs whose symbols and file offsets have become
// addresses. Symbols, file offsets and debug info are read here, in the
// CLI: the agent is given addresses.
// A probe whose object is not mapped yet is pending, placed once the
// loader maps it; system call events have no address and are left out
// (they go to the agent as they are, protocol::Probes::syscall_events).
// Every bad definition is reported, not only the first.
//
//   auto plan = plan_probes(set, objects, resolver);
//   if (!plan) for (auto& e : plan.error()) errors << render_error_safely(e);
//   auto more = plan_probes(set, objects, resolver, &changed.loaded);  // after a dlopen
#ifndef DPROBE_CLI_PLAN_PROBE_PLAN_H_
#define DPROBE_CLI_PLAN_PROBE_PLAN_H_

#include <vector>

#include "base/result.h"
#include "cli/plan/target_resolver.h"
#include "cli/process/process_objects.h"
#include "lang/definition_set.h"
#include "protocol/messages.h"

namespace dprobe::cli {

// What the agent is asked to arm, and what waits for its object.
struct Plan {
  std::vector<protocol::ProbeRequest> requests;
  // Definitions (indices into the set's specs) whose object is not mapped
  // yet: placed when it is.
  std::vector<size_t> pending;
};

// Every definition of the set; or, with `only`, those whose object is one
// of the given (just loaded) objects.
Result<Plan, std::vector<lang::ProbeError>> plan_probes(
    const lang::DefinitionSet& set, const ProcessObjects& objects, TargetResolver& resolver,
    const std::vector<protocol::LoadedObject>* only = nullptr);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_PROBE_PLAN_H_
