// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/definitions.h"

#include <ostream>

#include "cli/target_resolver.h"
#include "lang/definition.h"

namespace dprobe::cli {
namespace {

std::vector<lang::SourceLine> collect_lines(const DefinitionSources& sources, std::ostream& errors,
                                            bool* ok) {
  std::vector<lang::SourceLine> lines;
  for (const std::string& text : sources.expressions) lines.push_back({text, {}});
  for (const std::string& path : sources.files) {
    auto file = lang::read_definition_file(path);
    if (!file) {
      errors << "dprobe: error: cannot read definitions: " << file.error().message << "\n";
      *ok = false;
      continue;
    }
    lines.insert(lines.end(), file->begin(), file->end());
  }
  return lines;
}

void report(lang::ProbeError error, const lang::SourceLine& line, std::ostream& errors) {
  error.origin = line.origin;
  errors << lang::render_error(error);
}

}  // namespace

std::optional<lang::DefinitionSet> load_definitions(const DefinitionSources& sources,
                                                    std::ostream& errors) {
  bool ok = true;
  const std::vector<lang::SourceLine> lines = collect_lines(sources, errors, &ok);
  TargetResolver resolver(sources.executable);
  lang::DefinitionSet set;
  for (const lang::SourceLine& line : lines) {
    auto def = lang::parse_definition(line.text);
    if (!def) {
      report(def.error(), line, errors);
      ok = false;
      continue;
    }
    auto resolved = resolver.resolve(std::move(*def));
    if (!resolved) {
      report(resolved.error(), line, errors);
      ok = false;
      continue;
    }
    for (lang::Definition& each : *resolved) {
      if (auto applied = set.apply(std::move(each)); !applied) {
        report(applied.error(), line, errors);
        ok = false;
      }
    }
  }
  if (!ok) return std::nullopt;
  return set;
}

}  // namespace dprobe::cli
