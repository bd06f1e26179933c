// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// An SDT point (%sdt_PROVIDER:NAME) becomes one definition per site its
// object's notes give, as perf probe makes one probe per site: named
// NAME, NAME_1, NAME_2 ...; each site's $argN become fetches of the
// operands the compiler chose there (a register, memory at a register and
// an offset, a constant, a variable), typed by the operand's size and
// sign unless a type was written. Without arguments the event records
// every operand, arg1..argN, as perf probe's SDT events do; $arg* puts
// them where it stands.
//
//   auto sites = resolve_sdt_sites(std::move(def), object);
#ifndef DPROBE_CLI_PLAN_SDT_POINTS_H_
#define DPROBE_CLI_PLAN_SDT_POINTS_H_

#include <vector>

#include "base/result.h"
#include "cli/plan/target_resolver.h"
#include "lang/definition.h"

namespace dprobe::cli {

Result<std::vector<lang::Definition>, lang::ProbeError> resolve_sdt_sites(
    lang::Definition def, const LoadedObject& object);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_SDT_POINTS_H_
