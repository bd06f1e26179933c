// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach -p PID [--duration S] [TRACE OPTIONS]` (trace_options.h):
// stops every thread of a running process with ptrace, has the process
// load the agent (it calls dlopen) and start it (the probes are armed
// while it is still stopped), lets it run, and streams hits until Ctrl-C,
// --duration or the process's exit.
// Detaching disarms every probe: the process's code is as it was.
#ifndef DPROBE_CLI_COMMAND_ATTACH_COMMAND_H_
#define DPROBE_CLI_COMMAND_ATTACH_COMMAND_H_

#include <sys/types.h>

#include <iosfwd>
#include <string>

#include "base/result.h"
#include "cli/command/subcommand.h"
#include "cli/command/trace_options.h"

namespace dprobe::cli {

struct AttachOptions {
  TraceSettings trace;  // the options every tracing subcommand shares
  pid_t pid = 0;
  double duration = 0;  // seconds; 0: until Ctrl-C or the process's exit
};

int run_attach(const AttachOptions& options, std::ostream& errors);

// `attach` and its options on the command line (built with or without the
// probe engine: attach_command_line.cc).
Subcommand add_attach_command(CLI::App& app);

// Why `pid` may not be traced by us, in words a user can act on.
Result<void> check_attachable(pid_t pid);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_ATTACH_COMMAND_H_
