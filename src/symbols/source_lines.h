// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Source lines and functions of the DWARF (symbols/debug_info.h) as probe
// addresses, the way perf probe resolves them:
//
//   FUNC:RLN  find_function_line(info, "visit", 3)     RLN lines after the
//             function's DW_AT_decl_line (line 0)
//   SRC:ALN   find_source_line(info, "prog.c", 42)     SRC matches a file
//             name by basename or by a path suffix ("lib/prog.c")
//   FUNC@SRC  find_function_entries(info, "visit", "prog.c")
//
// A line gets one address per contiguous block of code (loops, inlined
// copies, code the optimizer moved): the first is_stmt row of each run of
// is_stmt rows of that line, as perf probe and gdb pick. A function gets
// its out-of-line entry and the entry of every inlined instance. Addresses
// are link-time addresses of the object, sorted and each once.
#ifndef DPROBE_SYMBOLS_SOURCE_LINES_H_
#define DPROBE_SYMBOLS_SOURCE_LINES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "symbols/debug_info.h"

namespace dprobe::symbols {

struct CodeAddress {
  uint64_t address;
  std::string file;  // as the line table names it (usually absolute)
  int line;
  bool inlined;  // inside an inlined instance (of the function, or of the line's code)
};

// "visit:3" -> the line 3 lines after visit's declaration line, in visit
// (its out-of-line copy and its inlined instances). `file` narrows visit
// to the function of that file (FUNC@SRC:RLN); empty takes the one there is.
Result<std::vector<CodeAddress>> find_function_line(const DebugInfo& info,
                                                    std::string_view function, int relative_line,
                                                    std::string_view file = {});

// "prog.c:42" -> every block of code of line 42 of every file that matches.
Result<std::vector<CodeAddress>> find_source_line(const DebugInfo& info, std::string_view file,
                                                  int line);

// "visit" or "visit@prog.c" -> the entries of the function's copies.
Result<std::vector<CodeAddress>> find_function_entries(const DebugInfo& info,
                                                       std::string_view function,
                                                       std::string_view file = {});

// The lines of a function that have code, for `dprobe list -L`: perf probe's
// choice (is_stmt rows in the function's own code that map back to their
// line, the declaration line of an out-of-line copy, and the call lines of
// what is inlined into it).
struct FunctionLines {
  std::string function;
  std::string file;  // the declaring file, as the DWARF names it (comp_dir joined)
  int decl_line = 0;
  std::vector<int> lines;  // absolute, sorted, each once
};
Result<FunctionLines> function_lines(const DebugInfo& info, std::string_view function,
                                     std::string_view file = {});

// Whether `name` (a path from the DWARF) is `wanted`: equal, or ending in
// "/" + wanted.
bool source_file_matches(std::string_view name, std::string_view wanted);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_SOURCE_LINES_H_
