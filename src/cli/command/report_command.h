// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe report [FILE]`: prints a trace file `dprobe record` wrote
// (trace/trace_file.h) as `run` would have printed the trace: the kernel's
// trace text, or JSON lines with --json; --profile prints the profile
// table instead; --perfetto OUT.json writes the Chrome trace-event JSON
// (cli/output/perfetto.h) instead; --graph prints the calls as ftrace's
// function_graph (cli/output/function_graph.h), --functions a table per
// function (cli/output/function_table.h), --format strace the system
// calls as strace prints them (cli/output/strace_format.h). --event, --pid, --tid, --since and
// --until keep only the records they name. A file cut short or corrupt: everything before the bad
// chunk is printed, then an error naming its offset (exit status 1). A
// directory is an error; a FIFO is read once a writer comes, and while
// none is there, stderr says so. The notes of the file are shown with
// their control characters as \xNN.
#ifndef DPROBE_CLI_COMMAND_REPORT_COMMAND_H_
#define DPROBE_CLI_COMMAND_REPORT_COMMAND_H_

#include <cstdint>
#include <cstdio>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/command/subcommand.h"

namespace dprobe::cli {

// Which records a report shows; empty lists and unset times show all.
struct ReportFilter {
  std::vector<std::string> events;  // [GRP/]EVENT
  std::vector<uint32_t> pids;
  std::vector<uint32_t> tids;
  double since = -1;  // seconds on the trace clock, as the lines print it
  double until = -1;
};

struct ReportOptions {
  std::string file = "dprobe.dat";
  bool json = false;
  bool profile = false;
  std::string perfetto;    // --perfetto OUT.json: the timeline there, nothing on stdout
  bool graph = false;      // --graph: the calls as ftrace's function_graph prints them
  bool functions = false;  // --functions: a table of the calls per function
  // --format strace, and its --string-limit, --syscall-times and
  // --timestamps (r only: the file keeps no wall clock), as typed.
  std::string format = "ftrace";
  std::string string_limit;
  bool syscall_times = false;
  std::string timestamps;
  ReportFilter filter;
};

int run_report(const ReportOptions& options, std::FILE* out, std::ostream& errors);

// `report` and its options on the command line.
Subcommand add_report_command(CLI::App& app);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_REPORT_COMMAND_H_
