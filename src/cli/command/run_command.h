// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe run [TRACE OPTIONS] -- CMD [ARGS]` (trace_options.h): starts CMD with
// the agent preloaded, has every probe armed before CMD's main runs,
// streams the hits as trace lines, and exits with CMD's exit status once
// all output is written; a CMD killed by a signal has dprobe killed by the
// same signal (no core file of dprobe's). SIGUSR2 to dprobe pauses every
// event, SIGUSR1 resumes them (as writing 0 or 1 to the kernel's
// tracing_on).
//
// The output: if writing the trace fails (a full disk), dprobe stops
// writing, lets CMD run to its end, says so, and exits 1 if CMD exited 0
// (CMD's status otherwise). A reader that goes away (| head) just ends the
// trace: CMD runs on, and its status is dprobe's.
#ifndef DPROBE_CLI_COMMAND_RUN_COMMAND_H_
#define DPROBE_CLI_COMMAND_RUN_COMMAND_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/command/subcommand.h"
#include "cli/command/trace_options.h"

namespace dprobe::cli {

struct RunOptions {
  TraceSettings trace;  // the options every tracing subcommand shares
  std::vector<std::string> command;
};

int run_run(const RunOptions& options, std::ostream& errors);

// `run` and its options on the command line (built with or without the
// probe engine: run_command_line.cc).
Subcommand add_run_command(CLI::App& app);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_RUN_COMMAND_H_
