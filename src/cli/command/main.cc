// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The dprobe command line: subcommands in the manner of perf, each a
// function in its own file; this file only declares options.
#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command/attach_command.h"
#include "cli/command/check_command.h"
#include "cli/command/line_listing.h"
#include "cli/command/list_command.h"
#include "cli/command/report_command.h"
#include "cli/command/run_command.h"
#include "cli/command/trace_options.h"
#include "cli/command/variable_listing.h"
#include "cli/output/terminal_text.h"
#include "cli/process/executable.h"
#include "cli/process/launcher.h"
#include "cli/session/trace_loop.h"
#include "dprobe_revision.h"  // DPROBE_GIT_REVISION, generated at build time

// Set by the build: 0 where there is no probe engine for the target ISA
// (everything but x86_64, for now), which leaves `dprobe run` out.
#ifndef DPROBE_ENGINE
#define DPROBE_ENGINE 1
#endif

namespace {

// 0 when the trace options are good, else 2 (bad usage) after saying why.
[[maybe_unused]] int check_trace_options(const dprobe::cli::TraceFlags& flags,
                                         dprobe::cli::TraceSettings& settings) {
  auto checked = dprobe::cli::trace_settings(flags);
  if (!checked) {
    std::cerr << "dprobe: error: " << checked.error().message << "\n";
    return 2;
  }
  settings = std::move(*checked);
  return 0;
}

// 0 when --duration is empty or good (into `seconds`), else 2 after saying why.
[[maybe_unused]] int check_duration(const std::string& duration, double& seconds) {
  if (duration.empty()) return 0;
  const auto parsed = dprobe::cli::parse_seconds(duration);
  if (!parsed) {
    std::cerr << "dprobe: error: bad --duration: " << dprobe::cli::printable(duration)
              << " (a number of seconds above 0, e.g. 0.5 or 10)\n";
    return 2;
  }
  seconds = *parsed;
  return 0;
}

#if DPROBE_ENGINE
// `record`: `run` (a command) or `attach` (-p PID), the trace written to a
// file (dprobe.dat unless -o) for `report`.
int record(const dprobe::cli::TraceFlags& flags, pid_t pid, const std::string& duration,
           const std::vector<std::string>& command) {
  dprobe::cli::TraceSettings settings;
  if (const int bad = check_trace_options(flags, settings); bad != 0) return bad;
  if (flags.json || (pid != 0) == !command.empty()) {
    std::cerr << "dprobe: error: record: "
              << (flags.json ? "--json is report's (dprobe report --json)"
                             : "a command after -- or -p PID, one of them")
              << "\n";
    return 2;
  }
  settings.format = dprobe::cli::OutputFormat::kRecord;
  settings.session.entry_times = true;  // report --perfetto draws each call as a slice
  if (settings.output.empty()) settings.output = "dprobe.dat";
  if (pid == 0) return dprobe::cli::run_run({std::move(settings), command}, std::cerr);
  dprobe::cli::AttachOptions attach{std::move(settings), pid, 0};
  if (const int bad = check_duration(duration, attach.duration); bad != 0) return bad;
  return dprobe::cli::run_attach(attach, std::cerr);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dprobe: kprobe-style dynamic probes for user-space programs"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", std::string("dprobe ") + DPROBE_VERSION + " (git " + DPROBE_GIT_REVISION + ")",
      "Print dprobe's version and git revision, and exit");

  dprobe::cli::CheckOptions check;
  CLI::App* check_cmd = app.add_subcommand(
      "check", "Parse and check definitions; print them as kprobe_events lists them");
  check_cmd->add_option("-x,--exec", check.sources.executable,
                        "Executable whose objects and symbols the definitions name");
  const dprobe::cli::DefinitionOptions check_definitions =
      dprobe::cli::add_definition_options(check_cmd, check.sources);
  check_cmd->add_flag("--format", check.show_format,
                      "Also print each event's record layout (events/GRP/EVENT/format)");

  dprobe::cli::RunOptions run;
  dprobe::cli::TraceFlags run_flags;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Run a command with probes armed before its main, and print the trace");
  dprobe::cli::add_trace_options(run_cmd, run_flags);
  run_cmd->add_option("command", run.command, "The command to trace, after --")->required();

  dprobe::cli::AttachOptions attach;
  dprobe::cli::TraceFlags attach_flags;
  std::string duration;
  CLI::App* attach_cmd =
      app.add_subcommand("attach", "Attach to a running process, arm probes, print the trace");
  attach_cmd->add_option("-p,--pid", attach.pid, "The process to attach to")->required();
  attach_cmd->add_option("--duration", duration,
                         "Detach after this many seconds, e.g. 0.5, 10 (default: Ctrl-C or the "
                         "process's exit)");
  dprobe::cli::add_trace_options(attach_cmd, attach_flags);

  dprobe::cli::TraceFlags record_flags;
  pid_t record_pid = 0;
  std::string record_duration;
  std::vector<std::string> record_command;
  CLI::App* record_cmd = app.add_subcommand(
      "record", "Run a command (or attach with -p PID) and write the trace to a file");
  dprobe::cli::add_trace_options(record_cmd, record_flags);
  record_cmd->add_option("-p,--pid", record_pid, "Attach to this process instead of running one");
  record_cmd->add_option("--duration", record_duration, "With -p: detach after this many seconds");
  record_cmd->add_option("command", record_command, "The command to trace, after --");

  dprobe::cli::ReportOptions report;
  CLI::App* report_cmd =
      app.add_subcommand("report", "Print a trace file that record wrote, as run prints a trace");
  report_cmd->add_option("file", report.file, "The trace file (default: dprobe.dat)");
  report_cmd->add_flag("--json", report.json, "Print JSON lines instead of ftrace text lines");
  report_cmd->add_flag("--profile", report.profile,
                       "Print the profile (each event's hits and misses) instead of the trace");
  report_cmd->add_option("--perfetto", report.perfetto,
                         "Write the trace as Chrome trace-event JSON for Perfetto (return probes "
                         "as slices) to this file, instead of printing it");
  // One value per occurrence: "--pid 5 FILE" leaves FILE alone.
  report_cmd
      ->add_option("--event", report.filter.events, "Only the records of [GRP/]EVENT (repeatable)")
      ->allow_extra_args(false);
  report_cmd
      ->add_option("--pid", report.filter.pids, "Only the records of this process (repeatable)")
      ->allow_extra_args(false);
  report_cmd
      ->add_option("--tid", report.filter.tids, "Only the records of this thread (repeatable)")
      ->allow_extra_args(false);
  report_cmd
      ->add_option("--since", report.filter.since,
                   "Only the records at or after this time (seconds, as the lines print it)")
      ->check(CLI::NonNegativeNumber);
  report_cmd
      ->add_option("--until", report.filter.until,
                   "Only the records at or before this time (seconds, as the lines print it)")
      ->check(CLI::NonNegativeNumber);

  dprobe::cli::ListOptions list;
  CLI::App* list_cmd = app.add_subcommand("list", "List the functions of an ELF object");
  list_cmd->add_option("-x,--exec", list.executable, "Executable to list (or to find OBJ for)");
  list_cmd->add_option("pattern", list.pattern, "[OBJ:]GLOB, e.g. 'libc.so.6:str*'");
  CLI::Option* lines_opt =
      list_cmd->add_option("-L,--line", list.line_function,
                           "Show FUNC[@SRC]'s source with its probe-able lines numbered, as perf "
                           "probe -L");
  list_cmd
      ->add_option("-V,--vars", list.variables_place,
                   "Show the variables a probe at PLACE can fetch, with their types, as perf "
                   "probe -V (FUNC, FUNC:RLN, SRC:ALN, FUNC@SRC)")
      ->excludes(lines_opt);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    // CLI11's messages quote what was typed: shown, never acted on.
    std::cerr << "dprobe: error: " << dprobe::cli::printable(error.what())
              << "\nRun with --help for more information.\n";
    return 2;
  }
  // A reader of the trace that goes away must not kill dprobe (and orphan
  // the program): writes then fail with EPIPE, and the trace ends.
  dprobe::cli::ignore_sigpipe();

  if (*run_cmd) {
#if DPROBE_ENGINE
    if (const int bad = check_trace_options(run_flags, run.trace); bad != 0) return bad;
    return dprobe::cli::run_run(run, std::cerr);
#else
    std::cerr << "dprobe: error: run: not supported on this architecture (no probe engine)\n";
    return 2;
#endif
  }
  if (*attach_cmd) {
#if DPROBE_ENGINE
    if (const int bad = check_trace_options(attach_flags, attach.trace); bad != 0) return bad;
    if (const int bad = check_duration(duration, attach.duration); bad != 0) return bad;
    return dprobe::cli::run_attach(attach, std::cerr);
#else
    std::cerr << "dprobe: error: attach: not supported on this architecture (no probe engine)\n";
    return 2;
#endif
  }
  if (*record_cmd) {
#if DPROBE_ENGINE
    return record(record_flags, record_pid, record_duration, record_command);
#else
    std::cerr << "dprobe: error: record: not supported on this architecture (no probe engine)\n";
    return 2;
#endif
  }
  if (*report_cmd) return dprobe::cli::run_report(report, stdout, std::cerr);
  if (*check_cmd) {
    dprobe::cli::record_order(check_definitions, check.sources);
    check.sources.executable = dprobe::cli::find_executable(check.sources.executable);
    return dprobe::cli::run_check(check, std::cout, std::cerr);
  }
  list.executable = dprobe::cli::find_executable(list.executable);
  if (!list.line_function.empty()) return dprobe::cli::run_list_lines(list, std::cout, std::cerr);
  if (!list.variables_place.empty()) {
    return dprobe::cli::run_list_variables(list, std::cout, std::cerr);
  }
  return dprobe::cli::run_list(list, std::cout, std::cerr);
}
