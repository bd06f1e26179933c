// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe report [FILE]`: prints a trace file `dprobe record` wrote
// (trace/trace_file.h) as `run` would have printed the trace: the kernel's
// trace text, or JSON lines with --json; --profile prints the profile
// table instead; --perfetto OUT.json writes the Chrome trace-event JSON
// (cli/perfetto.h) instead. A file cut short or corrupt: everything before the bad
// chunk is printed, then an error naming its offset (exit status 1).
#ifndef DPROBE_CLI_REPORT_COMMAND_H_
#define DPROBE_CLI_REPORT_COMMAND_H_

#include <cstdio>
#include <iosfwd>
#include <string>

namespace dprobe::cli {

struct ReportOptions {
  std::string file = "dprobe.dat";
  bool json = false;
  bool profile = false;
  std::string perfetto;  // --perfetto OUT.json: the timeline there, nothing on stdout
};

int run_report(const ReportOptions& options, std::FILE* out, std::ostream& errors);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_REPORT_COMMAND_H_
