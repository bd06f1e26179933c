// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/variable_listing.h"

#include <ostream>

#include "cli/output/terminal_text.h"
#include "cli/plan/target_resolver.h"
#include "lang/definition.h"
#include "lang/format_definition.h"
#include "symbols/dwarf_variables.h"

namespace dprobe::cli {
namespace {

void list_at(const lang::Definition& def, const LoadedObject& object, std::ostream& out) {
  out << "\t@<" << printable(lang::format_target(def.spec.point.target)) << ">\n";
  // Resolved with $vars, the definition holds where its DWARF was read.
  const symbols::DebugInfo* info = object.debug ? &*object.debug : nullptr;
  if (def.link_address == 0 || info == nullptr) {
    out << "\t\t(no debug information here)\n";
    return;
  }
  auto variables = symbols::variables_at(*info, def.link_address);
  if (!variables) {
    out << "\t\t(" << printable(variables.error().message) << ")\n";
    return;
  }
  for (const symbols::ScopeVariable& variable : *variables) {
    if (variable.global) continue;
    out << "\t\t" << printable(variable.type_name) << "\t" << printable(variable.name);
    if (!variable.available) out << "\t(optimized out here)";
    out << "\n";
  }
}

}  // namespace

int run_list_variables(const ListOptions& options, std::ostream& out, std::ostream& errors) {
  if (options.executable.empty()) {
    errors << "dprobe: error: list -V: give -x BINARY, the object whose variables to list\n";
    return 2;
  }
  // The place as a probe with $vars: resolved as `run` would, past the
  // prologue of a function's entry.
  auto def = lang::parse_definition("p " + options.variables_place + " $vars");
  if (!def) {
    errors << lang::render_error(def.error());
    return 2;
  }
  TargetResolver resolver(options.executable);
  auto resolved = resolver.resolve(std::move(*def));
  if (!resolved) {
    errors << lang::render_error(resolved.error());
    return 2;
  }
  out << "Available variables at " << printable(options.variables_place) << "\n";
  for (const lang::Definition& each : *resolved) {
    auto object = resolver.load(each.spec.point.target.object);
    if (!object) continue;
    list_at(each, **object, out);
  }
  return 0;
}

}  // namespace dprobe::cli
