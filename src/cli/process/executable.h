// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Finds a program the way a shell would: a name with a '/' is a path,
// anything else is looked up in $PATH; and a script's interpreter as the
// kernel finds it.
#ifndef DPROBE_CLI_PROCESS_EXECUTABLE_H_
#define DPROBE_CLI_PROCESS_EXECUTABLE_H_

#include <string>
#include <vector>

#include "base/result.h"

namespace dprobe::cli {

// The path of `name`; `name` itself when it holds a '/', is empty, or is
// not found in $PATH (so that the error names what the user wrote).
std::string find_executable(const std::string& name);

// What the kernel runs for `executable`: itself, or for a `#!` script the
// interpreter its first line names (with the optional argument, then the
// script's path, then the rest of `argv`), followed as the kernel follows
// it, a few levels deep. Probes on the main program are then the
// interpreter's.
struct ExecTarget {
  std::string executable;
  std::vector<std::string> argv;
};
Result<ExecTarget> resolve_interpreter(const std::string& executable,
                                       const std::vector<std::string>& argv);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_EXECUTABLE_H_
