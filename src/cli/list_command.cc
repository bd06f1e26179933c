// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/list_command.h"

#include <fmt/format.h>

#include <ostream>

#include "cli/target_resolver.h"
#include "lang/target.h"
#include "symbols/lookup_error.h"

namespace dprobe::cli {
namespace {

struct Pattern {
  std::string object;
  std::string glob;
};

Pattern split_pattern(const std::string& text) {
  const size_t colon = lang::object_separator(text);
  if (colon == std::string::npos) return {{}, text.empty() ? "*" : text};
  const std::string glob = text.substr(colon + 1);
  return {text.substr(0, colon), glob.empty() ? "*" : glob};
}

}  // namespace

int run_list(const ListOptions& options, std::ostream& out, std::ostream& errors) {
  const Pattern pattern = split_pattern(options.pattern);
  if (pattern.object.empty() && options.executable.empty()) {
    errors << "dprobe: error: nothing to list: give -x BINARY or OBJ:PATTERN\n";
    return 2;
  }
  TargetResolver resolver(options.executable);
  auto object = resolver.load(pattern.object);
  if (!object) {
    const symbols::LookupError& error = object.error();
    errors << "dprobe: error: " << symbols::describe(error.kind);
    if (!error.detail.empty()) errors << ": " << error.detail;
    errors << "\n";
    return 2;
  }
  std::string text;
  for (const symbols::FunctionSymbol* function : (*object)->table.match(pattern.glob)) {
    fmt::format_to(std::back_inserter(text), "0x{:016x} {:8} {}{}\n", function->address,
                   function->size, function->display_name(), function->is_ifunc ? " [ifunc]" : "");
  }
  out << text;
  return 0;
}

}  // namespace dprobe::cli
