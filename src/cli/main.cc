// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The dprobe command line: subcommands in the manner of perf, each a
// function in its own file; this file only declares options.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/attach_command.h"
#include "cli/check_command.h"
#include "cli/executable.h"
#include "cli/list_command.h"
#include "cli/run_command.h"

// Set by the build: 0 where there is no probe engine for the target ISA
// (everything but x86_64, for now), which leaves `dprobe run` out.
#ifndef DPROBE_ENGINE
#define DPROBE_ENGINE 1
#endif

namespace {

struct DefinitionOptions {
  CLI::Option* expressions;
  CLI::Option* files;
};

DefinitionOptions add_definition_options(CLI::App* command,
                                         dprobe::cli::DefinitionSources& sources) {
  // One value per occurrence: "-e DEF -- CMD" must leave "--" alone.
  CLI::Option* expressions = command->add_option(
      "-e,--event", sources.expressions, "Probe definition, kprobe_events syntax (repeatable)");
  CLI::Option* files =
      command->add_option("-f,--file", sources.files,
                          "File of probe definitions, one per line, # comments (repeatable)");
  expressions->allow_extra_args(false);
  files->allow_extra_args(false);
  return {expressions, files};
}

// The command-line order of -e and -f, so that `-f defs -e '-:grp/ev'`
// removes what the file defined.
void record_order(const CLI::App* command, const DefinitionOptions& options,
                  dprobe::cli::DefinitionSources& sources) {
  for (const CLI::Option* option : command->parse_order()) {
    if (option == options.expressions)
      sources.order.push_back(dprobe::cli::SourceKind::kExpression);
    if (option == options.files) sources.order.push_back(dprobe::cli::SourceKind::kFile);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dprobe: kprobe-style dynamic probes for user-space programs"};
  app.require_subcommand(1);

  dprobe::cli::CheckOptions check;
  CLI::App* check_cmd = app.add_subcommand(
      "check", "Parse and check definitions; print them as kprobe_events lists them");
  check_cmd->add_option("-x,--exec", check.sources.executable,
                        "Executable whose objects and symbols the definitions name");
  const DefinitionOptions check_definitions = add_definition_options(check_cmd, check.sources);
  check_cmd->add_flag("--format", check.show_format,
                      "Also print each event's record layout (events/GRP/EVENT/format)");

  dprobe::cli::RunOptions run;
  std::string buffer_size = "1M";
  bool json = false;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Run a command with probes armed before its main, and print the trace");
  const DefinitionOptions run_definitions = add_definition_options(run_cmd, run.sources);
  run_cmd->add_option("-o,--output", run.output, "Write the trace to a file, not stdout");
  run_cmd->add_flag("--json", json, "Print JSON lines instead of ftrace text lines");
  run_cmd->add_flag("--profile", run.profile,
                    "At the end, print each event's hits and misses (as kprobe_profile)");
  run_cmd->add_option("--buffer-size", buffer_size,
                      "Ring size per thread, e.g. 512K, 4M (default 1M)");
  run_cmd
      ->add_option("--disable", run.disabled,
                   "Start with [GRP/]EVENT disabled (repeatable); SIGUSR2 to dprobe pauses "
                   "every event, SIGUSR1 resumes")
      ->allow_extra_args(false);
  run_cmd->add_flag("--follow", run.follow,
                    "Trace the children too (fork, and programs they exec); without it they "
                    "run with no probes");
  run_cmd->add_option("command", run.command, "The command to trace, after --")->required();

  dprobe::cli::AttachOptions attach;
  std::string attach_buffer_size = "1M";
  bool attach_json = false;
  CLI::App* attach_cmd =
      app.add_subcommand("attach", "Attach to a running process, arm probes, print the trace");
  attach_cmd->add_option("-p,--pid", attach.pid, "The process to attach to")->required();
  const DefinitionOptions attach_definitions = add_definition_options(attach_cmd, attach.sources);
  attach_cmd->add_option("--duration", attach.duration,
                         "Detach after this many seconds (default: Ctrl-C or the process's exit)");
  attach_cmd->add_option("-o,--output", attach.output, "Write the trace to a file, not stdout");
  attach_cmd->add_flag("--json", attach_json, "Print JSON lines instead of ftrace text lines");
  attach_cmd->add_flag("--profile", attach.profile,
                       "At the end, print each event's hits and misses (as kprobe_profile)");
  attach_cmd->add_option("--buffer-size", attach_buffer_size,
                         "Ring size per thread, e.g. 512K, 4M (default 1M)");
  attach_cmd->add_option("--disable", attach.disabled, "Start with [GRP/]EVENT disabled")
      ->allow_extra_args(false);
  attach_cmd->add_flag("--follow", attach.follow,
                       "Trace the children it forks from now on; without it they run with no "
                       "probes");

  dprobe::cli::ListOptions list;
  CLI::App* list_cmd = app.add_subcommand("list", "List the functions of an ELF object");
  list_cmd->add_option("-x,--exec", list.executable, "Executable to list (or to find OBJ for)");
  list_cmd->add_option("pattern", list.pattern, "[OBJ:]GLOB, e.g. 'libc.so.6:str*'");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int status = app.exit(error);
    return status == 0 ? 0 : 2;
  }

  if (*run_cmd) {
#if DPROBE_ENGINE
    record_order(run_cmd, run_definitions, run.sources);
    run.format = json ? dprobe::cli::OutputFormat::kJson : dprobe::cli::OutputFormat::kText;
    const auto bytes = dprobe::cli::parse_buffer_size(buffer_size);
    if (!bytes) {
      std::cerr << "dprobe: error: bad --buffer-size: " << buffer_size << "\n";
      return 2;
    }
    run.buffer_size = *bytes;
    return dprobe::cli::run_run(run, std::cerr);
#else
    static_cast<void>(run_definitions);
    std::cerr << "dprobe: error: run: not supported on this architecture (no probe engine)\n";
    return 2;
#endif
  }
  if (*attach_cmd) {
#if DPROBE_ENGINE
    record_order(attach_cmd, attach_definitions, attach.sources);
    attach.format =
        attach_json ? dprobe::cli::OutputFormat::kJson : dprobe::cli::OutputFormat::kText;
    const auto bytes = dprobe::cli::parse_buffer_size(attach_buffer_size);
    if (!bytes) {
      std::cerr << "dprobe: error: bad --buffer-size: " << attach_buffer_size << "\n";
      return 2;
    }
    attach.buffer_size = *bytes;
    return dprobe::cli::run_attach(attach, std::cerr);
#else
    static_cast<void>(attach_definitions);
    std::cerr << "dprobe: error: attach: not supported on this architecture (no probe engine)\n";
    return 2;
#endif
  }
  if (*check_cmd) {
    record_order(check_cmd, check_definitions, check.sources);
    check.sources.executable = dprobe::cli::find_executable(check.sources.executable);
    return dprobe::cli::run_check(check, std::cout, std::cerr);
  }
  list.executable = dprobe::cli::find_executable(list.executable);
  return dprobe::cli::run_list(list, std::cout, std::cerr);
}
