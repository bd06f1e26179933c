// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `attach` on the command line: its options, and what runs once they are
// parsed. Apart from attach_command.cc, which only the probe engine
// builds: without it `attach` still parses, then says it is not supported.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

#include "cli/command/attach_command.h"

namespace dprobe::cli {
namespace {

// What `attach`'s options are parsed into.
struct AttachCommandLine {
  TraceFlags flags;
  AttachOptions options;
  std::string duration;  // --duration as typed
};

int attach_parsed([[maybe_unused]] AttachCommandLine& line) {
#if DPROBE_ENGINE
  if (const int bad = check_trace_options(line.flags, line.options.trace, std::cerr); bad != 0) {
    return bad;
  }
  if (const int bad = check_duration(line.duration, line.options.duration, std::cerr); bad != 0) {
    return bad;
  }
  return run_attach(line.options, std::cerr);
#else
  return refuse_without_engine("attach", std::cerr);
#endif
}

}  // namespace

Subcommand add_attach_command(CLI::App& app) {
  auto line = std::make_shared<AttachCommandLine>();
  CLI::App* command =
      app.add_subcommand("attach", "Attach to a running process, arm probes, print the trace");
  command->add_option("-p,--pid", line->options.pid, "The process to attach to")->required();
  command->add_option("--duration", line->duration,
                      "Detach after this long: seconds (0.5, 10) or with a unit (500ms, 2m) "
                      "(default: Ctrl-C or the process's exit)");
  add_trace_options(command, line->flags);
  return {command, [line] { return attach_parsed(*line); }};
}

}  // namespace dprobe::cli
