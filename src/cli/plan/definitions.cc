// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/definitions.h"

#include <map>
#include <mutex>
#include <ostream>
#include <sstream>

#include "cli/output/terminal_text.h"
#include "cli/plan/definition_file.h"
#include "cli/plan/target_resolver.h"
#include "lang/definition.h"
#include "lang/syscall_events.h"
#include "symbols/lookup_error.h"

namespace dprobe::cli {
namespace {

// Each file is read once per dprobe (it may be a pipe), and its lines kept
// for the programs a traced process execs later.
Result<std::vector<lang::SourceLine>> file_lines(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<lang::SourceLine>> read;
  std::lock_guard lock(mutex);
  if (const auto found = read.find(path); found != read.end()) return found->second;
  auto lines = read_definition_lines(path);
  if (lines) read[path] = *lines;
  return lines;
}

bool append_file(const std::string& path, std::vector<lang::SourceLine>& lines,
                 std::ostream& errors) {
  auto file = file_lines(path);
  if (!file) {
    errors << "dprobe: error: cannot read definitions: " << printable(file.error().message) << "\n";
    return false;
  }
  lines.insert(lines.end(), file->begin(), file->end());
  return true;
}

std::vector<lang::SourceLine> collect_lines(const DefinitionSources& sources, std::ostream& errors,
                                            bool* ok) {
  std::vector<SourceKind> order = sources.order;
  if (order.empty()) {
    order.assign(sources.expressions.size(), SourceKind::kExpression);
    order.insert(order.end(), sources.files.size(), SourceKind::kFile);
  }
  std::vector<lang::SourceLine> lines;
  size_t next_expression = 0;
  size_t next_file = 0;
  for (SourceKind kind : order) {
    if (kind == SourceKind::kExpression && next_expression < sources.expressions.size()) {
      lines.push_back({sources.expressions[next_expression++], {}});
    } else if (kind == SourceKind::kFile && next_file < sources.files.size()) {
      *ok = append_file(sources.files[next_file++], lines, errors) && *ok;
    }
  }
  return lines;
}

void report(lang::ProbeError error, const lang::SourceLine& line, std::ostream& errors) {
  error.origin = line.origin;
  errors << render_error_safely(error);
}

// syscalls:GLOB or raw_syscalls:GLOB: every event it names.
Result<void, lang::ProbeError> add_tracepoints(const lang::SourceLine& line,
                                               lang::DefinitionSet& set) {
  auto defs = lang::parse_tracepoint_selector(line.text);
  if (!defs) return unexpected(defs.error());
  for (lang::Definition& def : *defs) {
    if (auto applied = set.apply(std::move(def), line.origin); !applied) return applied;
  }
  return {};
}

// One line: parsed, resolved (a wildcard into its functions), added.
Result<void, lang::ProbeError> add_line(const lang::SourceLine& line, TargetResolver& resolver,
                                        lang::DefinitionSet& set) {
  if (lang::is_tracepoint_selector(line.text)) return add_tracepoints(line, set);
  auto def = lang::parse_definition(line.text);
  if (!def) return unexpected(def.error());
  if (def->spec.point.target.kind == core::TargetKind::kSyscall) {
    return set.apply(std::move(*def), line.origin);  // an event probe: nothing to resolve
  }
  auto resolved = resolver.resolve(std::move(*def));
  if (!resolved) return unexpected(resolved.error());
  for (lang::Definition& each : *resolved) {
    if (auto applied = set.apply(std::move(each), line.origin); !applied) return applied;
  }
  return {};
}

}  // namespace

namespace {

// With --follow, a definition whose object is not a file here (a path in
// the root a child will have, a library only a later program loads) waits
// for the programs that have it, as an exec'd program's definitions do.
bool waits_for_a_later_program(const lang::ProbeError& error, const lang::SourceLine& line,
                               bool follow, const std::string& executable, std::ostream& errors) {
  if (!follow || error.code != lang::ErrorCode::FILE_NOT_FOUND) return false;
  errors << "dprobe: " << printable(error.detail.empty() ? line.text : error.detail)
         << " is not a file for " << printable(executable)
         << ": probed in the programs --follow traces that have it: " << printable(line.text)
         << "\n";
  return true;
}

}  // namespace

std::optional<lang::DefinitionSet> load_definitions(const DefinitionSources& sources,
                                                    std::ostream& errors, bool follow) {
  bool ok = true;
  const std::vector<lang::SourceLine> lines = collect_lines(sources, errors, &ok);
  TargetResolver resolver(sources.executable);
  if (!sources.executable.empty()) {
    // A bad executable is one error, not one per definition that uses it.
    if (auto exe = resolver.load({}); !exe) {
      errors << "dprobe: error: " << printable(sources.executable) << ": "
             << symbols::describe(exe.error().kind) << "\n";
      return std::nullopt;
    }
  }
  lang::DefinitionSet set;
  for (const lang::SourceLine& line : lines) {
    if (auto added = add_line(line, resolver, set); !added) {
      if (waits_for_a_later_program(added.error(), line, follow, sources.executable, errors)) {
        continue;
      }
      report(added.error(), line, errors);
      ok = false;
    }
  }
  if (!ok || !apply_analysis(sources.analysis, set, &errors)) return std::nullopt;
  return set;
}

lang::DefinitionSet load_definitions_for(const DefinitionSources& sources,
                                         std::vector<std::string>* unresolved) {
  std::ostringstream ignored;  // the sources were read once already
  bool ok = true;
  const std::vector<lang::SourceLine> lines = collect_lines(sources, ignored, &ok);
  TargetResolver resolver(sources.executable);
  lang::DefinitionSet set;
  for (const lang::SourceLine& line : lines) {
    if (!add_line(line, resolver, set) && unresolved != nullptr) unresolved->push_back(line.text);
  }
  apply_analysis(sources.analysis, set, nullptr);
  return set;
}

}  // namespace dprobe::cli
