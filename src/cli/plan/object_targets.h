// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// How a probe on an address the CLI found (the DWARF's, a wildcard's, an
// SDT note's) is written as a target, and how the many events one
// definition becomes are named.
#ifndef DPROBE_CLI_PLAN_OBJECT_TARGETS_H_
#define DPROBE_CLI_PLAN_OBJECT_TARGETS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "cli/plan/target_resolver.h"
#include "core/probe_point.h"

namespace dprobe::cli {

// BASE_N, cut to the longest event name: the base is cut, not the suffix,
// so that names equal after the cut still come out different.
std::string numbered_event_name(const std::string& base, size_t n);

// The target of one link-time address of `object` (named `name` in the
// definition): SYM+OFFS when the name of the function there finds it, else
// PATH:0xOFFSET (static functions that share a name, a compatibility
// version), which is what perf probe writes to uprobe_events. nullopt for
// an address in no segment of the file.
std::optional<core::ProbeTarget> target_at(const LoadedObject& object, const std::string& name,
                                           uint64_t address);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_OBJECT_TARGETS_H_
