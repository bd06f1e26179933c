// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the agent could not arm, reported like any bad definition: the
// definition, a caret under its probe point, the code, and the agent's
// reason (and, for a probe inside an instruction, the listing) below.
//
//   errors << render_error(arm_error(result, set.sites()[i]));
#ifndef DPROBE_CLI_ARM_ERRORS_H_
#define DPROBE_CLI_ARM_ERRORS_H_

#include "lang/definition_set.h"
#include "lang/probe_error.h"
#include "protocol/messages.h"

namespace dprobe::cli {

lang::ErrorCode error_code_for(protocol::ArmStatus status);
lang::ProbeError arm_error(const protocol::ArmResult& result, const lang::DefinitionSite& site);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_ARM_ERRORS_H_
