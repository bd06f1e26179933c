// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe run [TRACE OPTIONS] -- CMD [ARGS]` (trace_options.h): the
// process dprobe was started as becomes CMD, with the agent preloaded and
// every probe armed before CMD's main runs; a collector beside it
// (process/launcher.h) streams the hits as trace lines, and CMD's exit
// waits until everything is written. CMD's exit status and signals are
// its own: nothing is forwarded. SIGUSR2 to the collector pauses every
// event, SIGUSR1 resumes them (as writing 0 or 1 to the kernel's
// tracing_on).
//
// The output: if writing the trace fails (a full disk), dprobe stops
// writing, lets CMD run to its end and says so. A reader that goes away
// (| head) just ends the trace: CMD runs on.
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
