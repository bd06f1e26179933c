// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The dprobe command line: subcommands in the manner of perf, each with
// its options in its own file (subcommand.h); this file only adds them,
// parses, and runs the one chosen.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command/attach_command.h"
#include "cli/command/check_command.h"
#include "cli/command/list_command.h"
#include "cli/command/option_hints.h"
#include "cli/command/record_command.h"
#include "cli/command/report_command.h"
#include "cli/command/run_command.h"
#include "cli/command/subcommand.h"
#include "cli/output/terminal_text.h"
#include "cli/process/launcher.h"
#include "dprobe_revision.h"  // DPROBE_GIT_REVISION, generated at build time

namespace {

// What a strace or perf habit meant, when the options refused it: `run -p
// PID` (strace -p) is `attach -p PID`; `run -c CMD` (perf record -c is
// not that, but bpftrace's -c is) is `run -- CMD`.
std::string habit_hint(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]) != "run") return {};
  for (int i = 2; i < argc && std::string(argv[i]) != "--"; ++i) {
    const std::string arg = argv[i];
    if (arg == "-p" || arg.starts_with("--pid")) {
      return "  run starts a command; to trace a running process: dprobe attach -p PID\n";
    }
    if (arg == "-c")
      return "  the command to run comes after --: dprobe run [OPTIONS] -- CMD ARGS\n";
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dprobe: kprobe-style dynamic probes for user-space programs"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", std::string("dprobe ") + DPROBE_VERSION + " (git " + DPROBE_GIT_REVISION + ")",
      "Print dprobe's version and git revision, and exit");
  // In the order --help lists them.
  const std::vector<dprobe::cli::Subcommand> subcommands{
      dprobe::cli::add_check_command(app),  dprobe::cli::add_run_command(app),
      dprobe::cli::add_attach_command(app), dprobe::cli::add_record_command(app),
      dprobe::cli::add_report_command(app), dprobe::cli::add_list_command(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    // CLI11's messages quote what was typed: shown, never acted on.
    std::cerr << "dprobe: error: " << dprobe::cli::printable(error.what()) << "\n"
              << habit_hint(argc, argv) << dprobe::cli::option_hint(app, argc, argv)
              << "Run with --help for more information.\n";
    return 2;
  }
  // A reader of the trace that goes away must not kill dprobe (and orphan
  // the program): writes then fail with EPIPE, and the trace ends.
  dprobe::cli::ignore_sigpipe();

  for (const dprobe::cli::Subcommand& subcommand : subcommands) {
    if (subcommand.command->parsed()) return subcommand.run();
  }
  return 2;  // not reached: the parse requires one subcommand
}
