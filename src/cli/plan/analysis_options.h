// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// --filter, --trigger and --stacktrace: what the agent does with an
// event's hits, given per event as 'GRP/EVENT:...' and applied to the
// events of a definition set once it is loaded. Compiled here, in the CLI
// (the filter to its program, the trigger to its spec); every error is
// reported with the kernel's message and a caret under the text.
//
//   AnalysisSources analysis{.filters = {"m/malloc:size > 4096"}, .stacktraces = {"m/malloc"}};
//   if (!apply_analysis(analysis, set, &std::cerr)) return kExitBadDefinition;
//   uint64_t bytes = hist_slot_bytes(set);   // each ring slot's hist tables
#ifndef DPROBE_CLI_PLAN_ANALYSIS_OPTIONS_H_
#define DPROBE_CLI_PLAN_ANALYSIS_OPTIONS_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "lang/definition_set.h"

namespace dprobe::cli {

struct AnalysisSources {
  std::vector<std::string> filters;      // --filter 'GRP/EVENT:EXPR'
  std::vector<std::string> triggers;     // --trigger 'GRP/EVENT:hist:...'
  std::vector<std::string> stacktraces;  // --stacktrace GRP/EVENT
  bool empty() const { return filters.empty() && triggers.empty() && stacktraces.empty(); }
};

// Applies every option to its event in `set`. With `errors`, an option
// that names no event of the set, or does not compile, is reported there
// and the result is false (nothing should be armed). Without, such options
// are skipped: the set of a program that exec'd may lack some events.
bool apply_analysis(const AnalysisSources& sources, lang::DefinitionSet& set, std::ostream* errors);

// The hist tables one ring slot holds for `set`: where the last table ends.
uint64_t hist_slot_bytes(const lang::DefinitionSet& set);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_ANALYSIS_OPTIONS_H_
