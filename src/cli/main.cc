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

// The numbers of `run` and `attach`, as typed: each is checked here, with
// one clear error, rather than by a conversion that could throw.
struct TraceNumbers {
  std::string buffer_size = "1M";
  std::string max_threads = "256";
};

void add_number_options(CLI::App* command, TraceNumbers& numbers) {
  command->add_option("--buffer-size", numbers.buffer_size,
                      "Ring size per thread, e.g. 512K, 4M (default 1M, at most 1G)");
  command->add_option("--max-threads", numbers.max_threads,
                      "Threads that can trace at once, each with its ring (default 256, at most " +
                          std::to_string(dprobe::cli::kMaxThreadsLimit) + ")");
}

// How probes are armed: jump-optimized where safe (the kernel's optprobes),
// breakpoints only with --no-optimize (its debug.kprobes-optimization=0).
void add_optimize_options(CLI::App* command, bool& optimize, bool& list_probes) {
  command->add_flag("!--no-optimize", optimize,
                    "Arm every probe as a breakpoint; by default a probe is replaced by a jump "
                    "to its trampoline where that is safe");
  command->add_flag("--probes", list_probes,
                    "List each placed probe on stderr, [OPTIMIZED] or [BREAKPOINT: why], as the "
                    "kernel's kprobes/list");
}

// 0 when both are good, else 2 (bad usage) after saying which is not.
[[maybe_unused]] int check_numbers(const TraceNumbers& numbers, uint64_t& buffer_size,
                                   uint32_t& max_threads) {
  const auto bytes = dprobe::cli::parse_buffer_size(numbers.buffer_size);
  if (!bytes) {
    std::cerr << "dprobe: error: bad --buffer-size: " << dprobe::cli::printable(numbers.buffer_size)
              << " (a size such as 512K, 4M, at most 1G)\n";
    return 2;
  }
  const auto threads = dprobe::cli::parse_max_threads(numbers.max_threads);
  if (!threads) {
    std::cerr << "dprobe: error: bad --max-threads: " << dprobe::cli::printable(numbers.max_threads)
              << " (a number from 1 to " << dprobe::cli::kMaxThreadsLimit << ")\n";
    return 2;
  }
  buffer_size = *bytes;
  max_threads = *threads;
  return 0;
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
  TraceNumbers run_numbers;
  bool json = false;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Run a command with probes armed before its main, and print the trace");
  const DefinitionOptions run_definitions = add_definition_options(run_cmd, run.sources);
  run_cmd->add_option("-o,--output", run.output, "Write the trace to a file, not stdout");
  run_cmd->add_flag("--json", json, "Print JSON lines instead of ftrace text lines");
  run_cmd->add_flag("--profile", run.profile,
                    "At the end, print each event's hits and misses (as kprobe_profile)");
  add_number_options(run_cmd, run_numbers);
  run_cmd
      ->add_option("--disable", run.disabled,
                   "Start with [GRP/]EVENT disabled (repeatable); SIGUSR2 to dprobe pauses "
                   "every event, SIGUSR1 resumes")
      ->allow_extra_args(false);
  add_optimize_options(run_cmd, run.optimize, run.list_probes);
  run_cmd->add_flag("--follow", run.follow,
                    "Trace the children too (fork, and programs they exec); without it they "
                    "run with no probes");
  run_cmd->add_option("command", run.command, "The command to trace, after --")->required();

  dprobe::cli::AttachOptions attach;
  TraceNumbers attach_numbers;
  std::string duration;
  bool attach_json = false;
  CLI::App* attach_cmd =
      app.add_subcommand("attach", "Attach to a running process, arm probes, print the trace");
  attach_cmd->add_option("-p,--pid", attach.pid, "The process to attach to")->required();
  const DefinitionOptions attach_definitions = add_definition_options(attach_cmd, attach.sources);
  attach_cmd->add_option("--duration", duration,
                         "Detach after this many seconds, e.g. 0.5, 10 (default: Ctrl-C or the "
                         "process's exit)");
  attach_cmd->add_option("-o,--output", attach.output, "Write the trace to a file, not stdout");
  attach_cmd->add_flag("--json", attach_json, "Print JSON lines instead of ftrace text lines");
  attach_cmd->add_flag("--profile", attach.profile,
                       "At the end, print each event's hits and misses (as kprobe_profile)");
  add_number_options(attach_cmd, attach_numbers);
  attach_cmd->add_option("--disable", attach.disabled, "Start with [GRP/]EVENT disabled")
      ->allow_extra_args(false);
  add_optimize_options(attach_cmd, attach.optimize, attach.list_probes);
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
    if (error.get_exit_code() == 0) return app.exit(error);  // --help
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
    record_order(run_cmd, run_definitions, run.sources);
    run.format = json ? dprobe::cli::OutputFormat::kJson : dprobe::cli::OutputFormat::kText;
    if (const int bad = check_numbers(run_numbers, run.buffer_size, run.max_threads); bad != 0) {
      return bad;
    }
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
    if (const int bad = check_numbers(attach_numbers, attach.buffer_size, attach.max_threads);
        bad != 0) {
      return bad;
    }
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
