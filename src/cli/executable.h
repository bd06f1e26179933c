// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Finds a program the way a shell would: a name with a '/' is a path,
// anything else is looked up in $PATH.
#ifndef DPROBE_CLI_EXECUTABLE_H_
#define DPROBE_CLI_EXECUTABLE_H_

#include <string>

namespace dprobe::cli {

// The path of `name`; `name` itself when it holds a '/', is empty, or is
// not found in $PATH (so that the error names what the user wrote).
std::string find_executable(const std::string& name);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_EXECUTABLE_H_
