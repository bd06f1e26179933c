// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe list -L FUNC[@SRC] -x BINARY`: the function's source with the
// lines a probe can name numbered relative to the function's first line,
// as `perf probe -L FUNC` prints it:
//
//   <visit@/src/prog.c:0>
//         0  int visit(struct item *it, int depth) {
//         1    int total = 0;
//              // no code here
//         3    for (...) {
#ifndef DPROBE_CLI_COMMAND_LINE_LISTING_H_
#define DPROBE_CLI_COMMAND_LINE_LISTING_H_

#include <iosfwd>
#include <string>

#include "base/result.h"
#include "cli/command/list_command.h"
#include "symbols/source_lines.h"

namespace dprobe::cli {

// The listing of `lines` from `source` (the file's text): from the
// declaration line to two lines after the last numbered one.
std::string format_line_listing(const symbols::FunctionLines& lines, const std::string& source);

// Reads the function's DWARF (symbols::DebugInfo) and its source file.
Result<std::string> line_listing(const std::string& object, const std::string& function_at_file,
                                 const symbols::DebugInfoPaths& paths);

// options.line_function in options.executable; 0, or 2 after an error.
int run_list_lines(const ListOptions& options, std::ostream& out, std::ostream& errors);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_COMMAND_LINE_LISTING_H_
