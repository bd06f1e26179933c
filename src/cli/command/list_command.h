// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe list [-x BINARY] [[OBJ:]PATTERN]`: the functions of an ELF object
// that probes can name, like `perf probe -x BINARY -F`, with their address
// and size. OBJ names a library as a definition would (path, soname or
// basename, found the way the loader finds it for BINARY).
// `dprobe list -L FUNC[@SRC] -x BINARY`: the function's probe-able source
// lines, as `perf probe -L` (cli/command/line_listing.h).
#ifndef DPROBE_CLI_COMMAND_LIST_COMMAND_H_
#define DPROBE_CLI_COMMAND_LIST_COMMAND_H_

#include <sys/types.h>

#include <iosfwd>
#include <string>

#include "cli/command/subcommand.h"

namespace dprobe::cli {

struct ListOptions {
  std::string executable;
  pid_t pid = 0;                // -p: the executable is this process's (cli/process/process_root.h)
  std::string pattern;          // [OBJ:]GLOB; empty lists everything in the executable
  std::string line_function;    // -L FUNC[@SRC]: its source lines (cli/command/line_listing.h)
  std::string variables_place;  // -V PLACE: its variables (cli/command/variable_listing.h)
};

int run_list(const ListOptions& options, std::ostream& out, std::ostream& errors);

// `list` and its options on the command line: -L and -V choose what it lists.
Subcommand add_list_command(CLI::App& app);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_LIST_COMMAND_H_
