// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The definitions of one session, in order: additions, and removals
// (`-:[GRP/][EVENT]`) of what earlier lines added. Event names are unique
// per group, and every event gets its id here.
//
//   DefinitionSet set;
//   for (auto& line : lines) if (auto r = set.apply(*parse_definition(line)); !r) ...
//   for (const trace::ProbeSpec& spec : set.specs()) ...
#ifndef DPROBE_LANG_DEFINITION_SET_H_
#define DPROBE_LANG_DEFINITION_SET_H_

#include <string>
#include <vector>

#include "base/result.h"
#include "lang/definition.h"

namespace dprobe::lang {

// Where a definition was written, for errors found after it was added
// (when its probe is placed in the process).
struct DefinitionSite {
  std::string command;
  std::string origin;  // "FILE:LINE", or empty for -e
  size_t target_column = 0;
  size_t symbol_column = 0;
  std::vector<size_t> arg_columns;
  // One of a wildcard's probes: a function the agent refuses is counted in
  // a summary, not an error that ends the session.
  bool expanded = false;
};

class DefinitionSet {
 public:
  // Adds or removes; a name already in use, or a removal that matches
  // nothing, is an error.
  Result<void, ProbeError> apply(Definition def, std::string origin = {});

  const std::vector<trace::ProbeSpec>& specs() const { return specs_; }
  // An event to give its analysis (--filter, --trigger, --stacktrace):
  // what its hits do, not where its probe is or what it is named.
  trace::EventDesc& event_at(size_t index) { return specs_[index].event; }
  // sites()[i] is where specs()[i] was written.
  const std::vector<DefinitionSite>& sites() const { return sites_; }
  bool empty() const { return specs_.empty(); }

 private:
  Result<void, ProbeError> add(Definition def, std::string origin);
  Result<void, ProbeError> remove(const Definition& def);

  std::vector<trace::ProbeSpec> specs_;
  std::vector<DefinitionSite> sites_;
  uint16_t next_id_ = 1;
};

// One definition line and where it came from ("-e" or "FILE:LINE").
struct SourceLine {
  std::string text;
  std::string origin;
};

// The definitions of a file: one per line; blank lines and '#' comments
// (from a '#' that starts a word to the end of the line) are skipped.
Result<std::vector<SourceLine>> read_definition_file(const std::string& path);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_DEFINITION_SET_H_
