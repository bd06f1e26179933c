// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The dprobe command line: subcommands in the manner of perf, each a
// function in its own file; this file only declares options.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/attach_command.h"
#include "cli/check_command.h"
#include "cli/executable.h"
#include "cli/launcher.h"
#include "cli/list_command.h"
#include "cli/run_command.h"
#include "cli/terminal_text.h"
#include "cli/trace_loop.h"
#include "cli/trace_options.h"
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

  dprobe::cli::ListOptions list;
  CLI::App* list_cmd = app.add_subcommand("list", "List the functions of an ELF object");
  list_cmd->add_option("-x,--exec", list.executable, "Executable to list (or to find OBJ for)");
  list_cmd->add_option("pattern", list.pattern, "[OBJ:]GLOB, e.g. 'libc.so.6:str*'");

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
    if (!duration.empty()) {
      const auto seconds = dprobe::cli::parse_seconds(duration);
      if (!seconds) {
        std::cerr << "dprobe: error: bad --duration: " << dprobe::cli::printable(duration)
                  << " (a number of seconds above 0, e.g. 0.5 or 10)\n";
        return 2;
      }
      attach.duration = *seconds;
    }
    return dprobe::cli::run_attach(attach, std::cerr);
#else
    std::cerr << "dprobe: error: attach: not supported on this architecture (no probe engine)\n";
    return 2;
#endif
  }
  if (*check_cmd) {
    dprobe::cli::record_order(check_definitions, check.sources);
    check.sources.executable = dprobe::cli::find_executable(check.sources.executable);
    return dprobe::cli::run_check(check, std::cout, std::cerr);
  }
  list.executable = dprobe::cli::find_executable(list.executable);
  return dprobe::cli::run_list(list, std::cout, std::cerr);
}
