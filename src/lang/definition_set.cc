// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/definition_set.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/strings.h"
#include "lang/format_definition.h"

namespace dprobe::lang {
namespace {

Unexpected<ProbeError> error_at(ErrorCode code, const Definition& def, size_t column) {
  return unexpected(ProbeError{code, def.command, column, {}, {}, {}});
}

bool matches(const trace::ProbeSpec& spec, const Definition& removal) {
  const bool group_ok = removal.remove_group.empty() || spec.event.group == removal.remove_group;
  const bool event_ok = removal.remove_event.empty() || spec.event.name == removal.remove_event;
  return group_ok && event_ok;
}

// A '#' that starts a word begins a comment.
std::string_view strip_comment(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    const bool word_start = i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t';
    if (line[i] == '#' && word_start) return line.substr(0, i);
  }
  return line;
}

}  // namespace

Result<void, ProbeError> DefinitionSet::apply(Definition def, std::string origin) {
  if (def.kind == Definition::Kind::kRemove) return remove(def);
  return add(std::move(def), std::move(origin));
}

Result<void, ProbeError> DefinitionSet::add(Definition def, std::string origin) {
  trace::ProbeSpec& spec = def.spec;
  for (const trace::ProbeSpec& existing : specs_) {
    if (existing.event.group != spec.event.group || existing.event.name != spec.event.name) {
      continue;
    }
    if (format_definition(existing) == format_definition(spec)) {
      return error_at(ErrorCode::SAME_PROBE, def, 0);
    }
    return error_at(ErrorCode::EVENT_EXIST, def, def.event_column);
  }
  spec.event.id = next_id_++;
  specs_.push_back(std::move(spec));
  sites_.push_back({std::move(def.command), std::move(origin), def.target_column, def.symbol_column,
                    std::move(def.arg_columns), def.expanded});
  return {};
}

Result<void, ProbeError> DefinitionSet::remove(const Definition& def) {
  size_t kept = 0;
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (matches(specs_[i], def)) continue;
    if (kept != i) {
      specs_[kept] = std::move(specs_[i]);
      sites_[kept] = std::move(sites_[i]);
    }
    ++kept;
  }
  if (kept == specs_.size()) return error_at(ErrorCode::NO_SUCH_EVENT, def, def.event_column);
  specs_.resize(kept);
  sites_.resize(kept);
  return {};
}

Result<std::vector<SourceLine>> read_definition_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail(path + ": " + std::strerror(errno));
  std::vector<SourceLine> lines;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    const std::string_view text = trim(strip_comment(line));
    if (text.empty()) continue;
    lines.push_back({std::string(text), path + ":" + std::to_string(number)});
  }
  if (in.bad()) return fail(path + ": read error");
  return lines;
}

}  // namespace dprobe::lang
