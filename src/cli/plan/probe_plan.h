// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Places checked definitions in a running process: from the objects the
// agent reports loaded (and where), every probe gets its run-time address,
// the function it lies in (for the agent's instruction-boundary check), and
// fetch programs whose symbols and file offsets have become addresses.
// ELF work stays here, in the CLI; the agent only decodes and patches.
//
//   auto plan = plan_probes(set, hello.objects, resolver);
//   if (!plan) for (auto& e : plan.error()) std::cerr << render_error(e);
#ifndef DPROBE_CLI_PLAN_PROBE_PLAN_H_
#define DPROBE_CLI_PLAN_PROBE_PLAN_H_

#include <vector>

#include "base/result.h"
#include "cli/plan/target_resolver.h"
#include "cli/process/process_objects.h"
#include "lang/definition_set.h"
#include "protocol/messages.h"

namespace dprobe::cli {

// One object of the process, with its file opened and its load bias.
struct Plan {
  std::vector<protocol::ProbeRequest> requests;
  // Definitions whose object is not mapped yet: placed when it is.
  std::vector<size_t> pending;
};

// Every definition of the set; or, with `only`, those whose object is one
// of the given (just loaded) objects.
Result<Plan, std::vector<lang::ProbeError>> plan_probes(
    const lang::DefinitionSet& set, const ProcessObjects& objects, TargetResolver& resolver,
    const std::vector<protocol::LoadedObject>* only = nullptr);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_PROBE_PLAN_H_
