// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/record_command.h"

#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/command/attach_command.h"
#include "cli/command/run_command.h"
#include "cli/command/trace_options.h"

namespace dprobe::cli {
namespace {

// What `record`'s options are parsed into.
struct RecordCommandLine {
  TraceFlags flags;
  pid_t pid = 0;
  std::string duration;  // --duration as typed
  std::vector<std::string> command;
};

int record_parsed([[maybe_unused]] const RecordCommandLine& line) {
#if DPROBE_ENGINE
  TraceSettings settings;
  if (const int bad = check_trace_options(line.flags, settings, std::cerr); bad != 0) return bad;
  if (line.flags.json || (line.pid != 0) == !line.command.empty()) {
    std::cerr << "dprobe: error: record: "
              << (line.flags.json ? "--json is report's (dprobe report --json)"
                                  : "a command after -- or -p PID, one of them")
              << "\n";
    return 2;
  }
  if (line.flags.graph) {
    std::cerr << "dprobe: error: record: --graph is report's (dprobe report --graph)\n";
    return 2;
  }
  if (settings.strace && (!line.flags.string_limit.empty() || line.flags.syscall_times ||
                          !line.flags.timestamps.empty())) {
    std::cerr << "dprobe: error: record: --string-limit, --syscall-times and --timestamps are "
                 "report's (dprobe report --format strace)\n";
    return 2;
  }
  settings.graph = false;   // --graph-functions: the probes; report --graph draws them
  settings.strace.reset();  // --format strace: its events; report --format strace prints them
  settings.format = OutputFormat::kRecord;
  settings.session.entry_times = true;  // report --perfetto draws each call as a slice
  if (settings.output.empty()) settings.output = "dprobe.dat";
  if (line.pid == 0) {
    return run_run({.trace = std::move(settings), .command = line.command}, std::cerr);
  }
  AttachOptions attach{.trace = std::move(settings), .pid = line.pid, .duration = 0};
  if (const int bad = check_duration(line.duration, attach.duration, std::cerr); bad != 0) {
    return bad;
  }
  return run_attach(attach, std::cerr);
#else
  return refuse_without_engine("record", std::cerr);
#endif
}

}  // namespace

Subcommand add_record_command(CLI::App& app) {
  auto line = std::make_shared<RecordCommandLine>();
  CLI::App* command = app.add_subcommand(
      "record", "Run a command (or attach with -p PID) and write the trace to a file");
  add_trace_options(command, line->flags);
  command->add_option("-p,--pid", line->pid, "Attach to this process instead of running one");
  command->add_option("--duration", line->duration,
                      "With -p: detach after this long (0.5, 10, 500ms, 2m)");
  command->add_option("command", line->command, "The command to trace, after --");
  return {command, [line] { return record_parsed(*line); }};
}

}  // namespace dprobe::cli
