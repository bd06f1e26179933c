// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The options every tracing subcommand takes (`run`, `attach`, `record`):
// one struct as typed, one call that adds them all to a CLI11 subcommand,
// and one check after parsing that turns them into settings or says, as a
// value, what is wrong.
//
//   TraceFlags flags;
//   add_trace_options(run_cmd, flags);
//   app.parse(argc, argv);
//   auto settings = trace_settings(flags);   // Result<TraceSettings>
//   if (!settings) { std::cerr << settings.error().message; return 2; }
#ifndef DPROBE_CLI_COMMAND_TRACE_OPTIONS_H_
#define DPROBE_CLI_COMMAND_TRACE_OPTIONS_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "cli/output/strace_format.h"
#include "cli/output/trace_reader.h"
#include "cli/plan/definitions.h"
#include "cli/session/session.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace dprobe::cli {

// -e and -f of one subcommand: their order on the command line is read
// back after parsing, so that `-f defs -e '-:grp/ev'` removes what the
// file defined.
struct DefinitionOptions {
  const CLI::App* command = nullptr;
  CLI::Option* expressions = nullptr;
  CLI::Option* files = nullptr;
};

DefinitionOptions add_definition_options(CLI::App* command, DefinitionSources& sources);
// Fills `sources.order` from what was parsed.
void record_order(const DefinitionOptions& options, DefinitionSources& sources);

// The options of a tracing subcommand, as typed.
struct TraceFlags {
  DefinitionSources sources;
  std::string output;    // -o; empty: stdout
  std::string perfetto;  // --perfetto OUT.json
  bool json = false;
  bool profile = false;
  std::string buffer_size = "1M";
  std::string max_threads = "256";
  std::vector<std::string> disabled;  // [GRP/]EVENT
  bool optimize = true;               // --no-optimize clears it
  bool list_probes = false;           // --probes
  bool follow = false;
  bool summary = false;                      // --summary: the strace -c table at the end
  bool graph = false;                        // --graph: the calls as a function graph at the end
  std::vector<std::string> graph_functions;  // --graph-functions: p and r on each
  std::string format = "ftrace";             // --format: ftrace (the kernel's lines) or strace
  // --format strace's: --syscalls (strace's -e trace=), --string-limit
  // (-s), --syscall-times (-T), --timestamps (-t, -tt, -ttt, -r).
  std::string syscalls;
  std::string string_limit;
  bool syscall_times = false;
  std::string timestamps;
  DefinitionOptions definitions;  // set by add_trace_options
};

void add_trace_options(CLI::App* command, TraceFlags& flags);

// The options checked: what the set-up of a trace takes.
struct TraceSettings {
  DefinitionSources sources;  // in command-line order; `executable` left to the subcommand
  std::string output;         // empty: stdout
  std::string perfetto;       // empty: none
  OutputFormat format = OutputFormat::kText;
  bool profile = false;
  SessionOptions session;  // ring bytes, threads, optimize, --probes
  std::vector<std::string> disabled;
  // --graph: the trace lines go nowhere; at the end the calls are printed
  // where they would have gone, as ftrace's function_graph.
  bool graph = false;
  // --format strace: the trace lines go nowhere; at the end the system
  // calls are printed where they would have gone, as strace prints them.
  std::optional<StraceOptions> strace;
  bool follow = false;
};

// Whether any of the options that only --format strace takes was given.
bool has_strace_only_options(const TraceFlags& flags);

// A bad number is an error naming the option and what it takes (a usage
// error: exit status 2).
Result<TraceSettings> trace_settings(const TraceFlags& flags);

// What the tracing subcommands do with their options once parsed: 0 when
// good (`settings`, `seconds` set), else 2 (bad usage) after saying why.
int check_trace_options(const TraceFlags& flags, TraceSettings& settings, std::ostream& errors);
// --duration, when given (empty: `seconds` left as it is).
int check_duration(const std::string& duration, double& seconds, std::ostream& errors);

// A tracing subcommand where there is no probe engine (DPROBE_ENGINE 0,
// command/subcommand.h): says so; 2.
int refuse_without_engine(std::string_view subcommand, std::ostream& errors);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_TRACE_OPTIONS_H_
