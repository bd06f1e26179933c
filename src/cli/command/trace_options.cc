// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/trace_options.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/output/terminal_text.h"
#include "cli/plan/strace_calls.h"
#include "cli/session/trace_loop.h"

namespace dprobe::cli {

DefinitionOptions add_definition_options(CLI::App* command, DefinitionSources& sources) {
  // One value per occurrence: "-e DEF -- CMD" must leave "--" alone.
  CLI::Option* expressions = command->add_option(
      "-e,--event", sources.expressions, "Probe definition, kprobe_events syntax (repeatable)");
  CLI::Option* files =
      command->add_option("-f,--file", sources.files,
                          "File of probe definitions, one per line, # comments (repeatable)");
  expressions->allow_extra_args(false);
  files->allow_extra_args(false);
  return {command, expressions, files};
}

void record_order(const DefinitionOptions& options, DefinitionSources& sources) {
  sources.order.clear();
  for (const CLI::Option* option : options.command->parse_order()) {
    if (option == options.expressions) sources.order.push_back(SourceKind::kExpression);
    if (option == options.files) sources.order.push_back(SourceKind::kFile);
  }
}

// --graph-functions PATTERN: an entry and a return probe on each function,
// after the definitions written out.
void add_graph_functions(const std::vector<std::string>& patterns, DefinitionSources& sources) {
  for (const std::string& pattern : patterns) {
    for (const char* kind : {"p ", "r "}) {
      sources.expressions.push_back(kind + pattern);
      if (!sources.order.empty()) sources.order.push_back(SourceKind::kExpression);
    }
  }
}

// --format strace and its options: the events it needs after the
// definitions (there are none written: it makes its own), and how to print.
Result<StraceOptions> strace_settings(const TraceFlags& flags, DefinitionSources& sources) {
  if (!sources.expressions.empty() || !sources.files.empty()) {
    return fail(
        "--format strace makes its own events: choose the calls with --syscalls, not -e "
        "or -f");
  }
  if (flags.json || flags.graph || !flags.graph_functions.empty()) {
    return fail("--format strace prints strace's lines: not with --json or --graph");
  }
  auto calls = strace::select_syscalls(flags.syscalls, arch::host_isa());
  if (!calls) return unexpected(calls.error());
  StraceOptions options;
  options.durations = flags.syscall_times;
  if (!flags.string_limit.empty()) {
    const auto limit = parse_count(flags.string_limit, strace::kMaxStringLimit);
    if (!limit) {
      return fail("bad --string-limit: " + printable(flags.string_limit) +
                  " (a number of bytes, at most " + std::to_string(strace::kMaxStringLimit) + ")");
    }
    options.string_limit = *limit;
  }
  for (std::string& definition :
       strace::strace_definitions(*calls, options.string_limit, arch::host_isa())) {
    sources.expressions.push_back(std::move(definition));
  }
  sources.order.clear();  // expressions only
  if (!flags.timestamps.empty()) {
    const auto timestamps = parse_strace_timestamps(flags.timestamps);
    if (!timestamps) {
      return fail("bad --timestamps: " + printable(flags.timestamps) +
                  " (t, tt, ttt or r, as strace's -t, -tt, -ttt, -r)");
    }
    options.timestamps = *timestamps;
  }
  return options;
}

bool has_strace_only_options(const TraceFlags& flags) {
  return !flags.syscalls.empty() || !flags.string_limit.empty() || flags.syscall_times ||
         !flags.timestamps.empty();
}

void add_strace_options(CLI::App* command, TraceFlags& flags) {
  command->add_option("--format", flags.format,
                      "ftrace: the kernel's trace lines (the default); strace: only system "
                      "calls, each as strace prints it, `openat(AT_FDCWD, \"/etc/hostname\", "
                      "O_RDONLY) = 3`, at the end (record: the events, for report --format "
                      "strace)");
  command->add_option("--syscalls", flags.syscalls,
                      "--format strace: the calls to trace, as strace's -e trace=: names "
                      "(openat,read; globs open*), classes (%file %desc %process %network "
                      "%signal %memory %ipc %creds %clock), all, !LIST for all but those "
                      "(default: all)");
  command->add_option("--string-limit", flags.string_limit,
                      "--format strace: print at most N bytes of a string, as strace's -s "
                      "(default 32; file names are printed whole)");
  command->add_flag("--syscall-times", flags.syscall_times,
                    "--format strace: each call's time from entry to return, <0.000012>, as "
                    "strace's -T");
  command->add_option("--timestamps", flags.timestamps,
                      "--format strace: t, tt, ttt or r before each line, as strace's -t "
                      "(time of day), -tt (with microseconds), -ttt (seconds since the epoch), "
                      "-r (since the previous line)");
}

void add_trace_options(CLI::App* command, TraceFlags& flags) {
  flags.definitions = add_definition_options(command, flags.sources);
  command->add_option("-o,--output", flags.output, "Write the trace to a file, not stdout");
  command->add_flag("--json", flags.json, "Print JSON lines instead of ftrace text lines");
  command->add_option("--perfetto", flags.perfetto,
                      "Also write the trace as Chrome trace-event JSON for Perfetto (return "
                      "probes as slices) to this file, at the end");
  command
      ->add_option("--graph-functions", flags.graph_functions,
                   "Probe the entry and the return of every function [OBJ:]PATTERN names (as -e "
                   "'p PATTERN' -e 'r PATTERN'), and print the calls as a function graph (--graph; "
                   "record: dprobe report --graph) (repeatable)")
      ->allow_extra_args(false);
  command->add_flag("--graph", flags.graph,
                    "Print the calls as the kernel's function_graph tracer does, at the end, "
                    "instead of the trace lines (needs entry and return probes on the same "
                    "functions)");
  command->add_flag(
      "--profile", flags.profile,
      "At the end, print each event's hits and misses on stderr (as kprobe_profile; on "
      "a terminal headed, most hits first)");
  command->add_option("--buffer-size", flags.buffer_size,
                      "Ring size per thread, e.g. 512K, 4M (default 1M, at most 1G)");
  command->add_option("--max-threads", flags.max_threads,
                      "Threads that can trace at once, each with its ring (default 256, at most " +
                          std::to_string(kMaxThreadsLimit) + ")");
  command
      ->add_option("--disable", flags.disabled,
                   "Start with [GRP/]EVENT disabled (repeatable); SIGUSR2 to dprobe (run: its "
                   "collector, pkill -USR2 -x dprobe) pauses every event, SIGUSR1 resumes")
      ->allow_extra_args(false);
  command->add_flag("!--no-optimize", flags.optimize,
                    "Arm every probe as a breakpoint; by default a probe is replaced by a jump "
                    "to its trampoline where that is safe");
  command->add_flag("--probes", flags.list_probes,
                    "List each placed probe on stderr, [OPTIMIZED] or [BREAKPOINT: why], as the "
                    "kernel's kprobes/list");
  command->add_flag("--summary", flags.summary,
                    "Count every system call (calls, errors, time from enter to exit) and print "
                    "the table at the end on stderr, as strace -c");
  command
      ->add_option("--filter", flags.sources.analysis.filters,
                   "Keep only the hits of GRP/EVENT that pass EXPR, the kernel's event filter "
                   "grammar: 'GRP/EVENT:size > 4096 && comm ~ \"py*\"' (repeatable)")
      ->allow_extra_args(false);
  command
      ->add_option("--trigger", flags.sources.analysis.triggers,
                   "Aggregate GRP/EVENT's hits in the agent, the kernel's hist trigger: "
                   "'GRP/EVENT:hist:keys=size.log2:sort=hitcount.descending'; printed at the end "
                   "where the trace goes (on stderr beside a binary trace file), in the kernel's "
                   "hist layout (repeatable)")
      ->allow_extra_args(false);
  command
      ->add_option("--stacktrace", flags.sources.analysis.stacktraces,
                   "Record the user stack at each hit of GRP/EVENT, unwound through .eh_frame "
                   "(JIT code by its frame pointers, named from /tmp/perf-PID.map), printed under "
                   "its line as ftrace's user stack block (repeatable)")
      ->allow_extra_args(false);
  command->add_flag("--follow", flags.follow,
                    "Trace the child processes too (forked, and the programs they exec); without "
                    "it they run with no probes");
  add_strace_options(command, flags);
}

Result<TraceSettings> trace_settings(const TraceFlags& flags) {
  const auto bytes = parse_buffer_size(flags.buffer_size);
  if (!bytes) {
    return fail("bad --buffer-size: " + printable(flags.buffer_size) +
                " (a size such as 512K, 4M, at most 1G)");
  }
  const auto threads = parse_max_threads(flags.max_threads);
  if (!threads) {
    return fail("bad --max-threads: " + printable(flags.max_threads) + " (a number from 1 to " +
                std::to_string(kMaxThreadsLimit) + ")");
  }
  if (flags.json && (flags.graph || !flags.graph_functions.empty())) {
    return fail("--graph prints text: --json and --graph, one of them");
  }
  TraceSettings settings;
  settings.sources = flags.sources;
  if (flags.definitions.command != nullptr) record_order(flags.definitions, settings.sources);
  if (flags.format == "strace") {
    auto strace = strace_settings(flags, settings.sources);
    if (!strace) return unexpected(strace.error());
    settings.strace = *strace;
  } else if (flags.format != "ftrace") {
    return fail("bad --format: " + printable(flags.format) +
                " (ftrace, the kernel's trace lines, or strace)");
  } else if (has_strace_only_options(flags)) {
    return fail(
        "--syscalls, --string-limit, --syscall-times and --timestamps go with --format "
        "strace");
  }
  add_graph_functions(flags.graph_functions, settings.sources);
  settings.graph = flags.graph || !flags.graph_functions.empty();
  settings.output = flags.output;
  settings.perfetto = flags.perfetto;
  settings.format = flags.json ? OutputFormat::kJson : OutputFormat::kText;
  settings.profile = flags.profile;
  settings.session.ring_bytes = *bytes;
  settings.session.max_threads = *threads;
  settings.session.optimize = flags.optimize;
  settings.session.list_probes = flags.list_probes;
  settings.session.syscall_summary = flags.summary;
  settings.session.entry_times = !flags.perfetto.empty() || settings.graph;
  settings.disabled = flags.disabled;
  settings.follow = flags.follow;
  return settings;
}

int check_trace_options(const TraceFlags& flags, TraceSettings& settings, std::ostream& errors) {
  auto checked = trace_settings(flags);
  if (!checked) {
    errors << "dprobe: error: " << checked.error().message << "\n";
    return 2;
  }
  settings = std::move(*checked);
  return 0;
}

int check_duration(const std::string& duration, double& seconds, std::ostream& errors) {
  if (duration.empty()) return 0;
  const auto parsed = parse_seconds(duration);
  if (!parsed) {
    errors << "dprobe: error: bad --duration: " << printable(duration)
           << " (a time above 0: seconds, e.g. 0.5 or 10, or with a unit: 500ms, 2s, 5m, 1h)\n";
    return 2;
  }
  seconds = *parsed;
  return 0;
}

int refuse_without_engine(std::string_view subcommand, std::ostream& errors) {
  errors << "dprobe: error: " << subcommand
         << ": not supported on this architecture (no probe engine)\n";
  return 2;
}

}  // namespace dprobe::cli
