// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach -p PID [-e DEF]... [-f FILE] [--duration S] [-o OUT]
//  [--json] [--profile] [--buffer-size N]`: stops every thread of a running
// process with ptrace, has the process load the agent (it calls dlopen) and
// start it (the probes are armed while it is still stopped), lets it run,
// and streams hits until Ctrl-C, --duration or the process's exit.
// Detaching disarms every probe: the process's code is as it was.
#ifndef DPROBE_CLI_ATTACH_COMMAND_H_
#define DPROBE_CLI_ATTACH_COMMAND_H_

#include <sys/types.h>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/definitions.h"
#include "cli/trace_reader.h"

namespace dprobe::cli {

struct AttachOptions {
  DefinitionSources sources;
  pid_t pid = 0;
  double duration = 0;  // seconds; 0: until Ctrl-C or the process's exit
  std::string output;
  OutputFormat format = OutputFormat::kText;
  bool profile = false;
  uint64_t buffer_size = 1u << 20;
  uint32_t max_threads = 256;
  bool optimize = true;      // --no-optimize: breakpoints only
  bool list_probes = false;  // --probes
  std::vector<std::string> disabled;
  bool follow = false;  // trace the children it forks from now on
};

int run_attach(const AttachOptions& options, std::ostream& errors);

// Why `pid` may not be traced by us, in words a user can act on.
Result<void> check_attachable(pid_t pid);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_ATTACH_COMMAND_H_
