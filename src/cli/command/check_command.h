// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe check`: parse and check definitions without running anything,
// print each normalized as `cat kprobe_events` would, and with --format the
// record layout as events/GRP/EVENT/format.
#ifndef DPROBE_CLI_COMMAND_CHECK_COMMAND_H_
#define DPROBE_CLI_COMMAND_CHECK_COMMAND_H_

#include <iosfwd>

#include "cli/command/subcommand.h"
#include "cli/plan/definitions.h"

namespace dprobe::cli {

struct CheckOptions {
  DefinitionSources sources;
  bool show_format = false;
};

int run_check(const CheckOptions& options, std::ostream& out, std::ostream& errors);

// `check` and its options on the command line.
Subcommand add_check_command(CLI::App& app);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_CHECK_COMMAND_H_
