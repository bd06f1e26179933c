// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// -f FILE: definitions, one per line, blank lines and '#' comments
// skipped. Any file that can be read works (a pipe, /dev/stdin), but only
// up to kMaxDefinitionFileBytes: a file that never ends (-f /dev/zero) is
// an error, not memory without bound.
//
//   auto lines = read_definition_lines("probes.txt");
#ifndef DPROBE_CLI_PLAN_DEFINITION_FILE_H_
#define DPROBE_CLI_PLAN_DEFINITION_FILE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "base/result.h"
#include "lang/definition_set.h"

namespace dprobe::cli {

inline constexpr size_t kMaxDefinitionFileBytes = size_t{16} << 20;

// The definitions of `path`, each with its "FILE:LINE" origin.
Result<std::vector<lang::SourceLine>> read_definition_lines(
    const std::string& path, size_t max_bytes = kMaxDefinitionFileBytes);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_DEFINITION_FILE_H_
