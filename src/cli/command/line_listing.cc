// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/line_listing.h"

#include <fmt/format.h>

#include <fstream>
#include <ostream>
#include <sstream>

#include "cli/output/terminal_text.h"

namespace dprobe::cli {

std::string format_line_listing(const symbols::FunctionLines& lines, const std::string& source) {
  std::string out = fmt::format("<{}@{}:0>\n", lines.function, lines.file);
  const int last = lines.lines.empty() ? lines.decl_line : lines.lines.back();
  std::istringstream in(source);
  std::string text;
  auto numbered = lines.lines.begin();
  for (int line = 1; line <= last + 3 && std::getline(in, text); ++line) {
    if (line < lines.decl_line) continue;
    while (numbered != lines.lines.end() && *numbered < line) ++numbered;
    if (numbered != lines.lines.end() && *numbered == line) {
      fmt::format_to(std::back_inserter(out), "{:7}  {}\n", line - lines.decl_line, text);
    } else {
      fmt::format_to(std::back_inserter(out), "         {}\n", text);
    }
  }
  return out;
}

Result<std::string> line_listing(const std::string& object, const std::string& function_at_file,
                                 const symbols::DebugInfoPaths& paths) {
  const size_t at = function_at_file.find('@');
  const std::string function = function_at_file.substr(0, at);
  const std::string file = at == std::string::npos ? "" : function_at_file.substr(at + 1);
  if (function.empty()) return fail("-L: no function named (FUNC or FUNC@SRC)");
  auto info = symbols::DebugInfo::open(object, paths);
  if (!info) return unexpected(info.error());
  auto lines = symbols::function_lines(*info, function, file);
  if (!lines) return unexpected(lines.error());
  std::ifstream in(lines->file, std::ios::binary);
  if (!in) {
    return fail("source file " + lines->file + " of " + function +
                " not found (the debug information of " + object + " names it)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return format_line_listing(*lines, text.str());
}

int run_list_lines(const ListOptions& options, std::ostream& out, std::ostream& errors) {
  if (options.executable.empty()) {
    errors << "dprobe: error: list -L: give -x BINARY, the object whose function to list\n";
    return 2;
  }
  auto listing =
      line_listing(options.executable, options.line_function, symbols::DebugInfoPaths::from_host());
  if (!listing) {
    errors << "dprobe: error: " << printable(listing.error().message) << "\n";
    return 2;
  }
  out << *listing;
  return 0;
}

}  // namespace dprobe::cli
