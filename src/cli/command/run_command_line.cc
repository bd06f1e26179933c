// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `run` on the command line: its options, and what runs once they are
// parsed. Apart from run_command.cc, which only the probe engine builds:
// without it `run` still parses, then says it is not supported.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/command/run_command.h"

namespace dprobe::cli {
namespace {

// What `run`'s options are parsed into.
struct RunCommandLine {
  TraceFlags flags;
  RunOptions options;
};

int run_parsed([[maybe_unused]] RunCommandLine& line) {
#if DPROBE_ENGINE
  if (const int bad = check_trace_options(line.flags, line.options.trace, std::cerr); bad != 0) {
    return bad;
  }
  return run_run(line.options, std::cerr);
#else
  return refuse_without_engine("run", std::cerr);
#endif
}

}  // namespace

Subcommand add_run_command(CLI::App& app) {
  auto line = std::make_shared<RunCommandLine>();
  CLI::App* command = app.add_subcommand(
      "run", "Run a command with probes armed before its main, and print the trace");
  add_trace_options(command, line->flags);
  command->add_option("command", line->options.command, "The command to trace, after --")
      ->required();
  return {command, [line] { return run_parsed(*line); }};
}

}  // namespace dprobe::cli
