// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe record [TRACE OPTIONS] -- CMD [ARGS]` or `dprobe record -p PID
// [--duration S] [TRACE OPTIONS]`: `run` (run_command.h) or `attach`
// (attach_command.h), the trace written to a file (dprobe.dat unless -o)
// for `report` (report_command.h). Every return probe's record carries its
// call's entry time, so that `report --perfetto` draws each call as a slice.
#ifndef DPROBE_CLI_COMMAND_RECORD_COMMAND_H_
#define DPROBE_CLI_COMMAND_RECORD_COMMAND_H_

#include "cli/command/subcommand.h"

namespace dprobe::cli {

// `record` and its options on the command line.
Subcommand add_record_command(CLI::App& app);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_RECORD_COMMAND_H_
