// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Turns the definitions of a command line (-e DEF, -f FILE) into one
// checked DefinitionSet: parsed, wildcards expanded, symbols resolved.
// Every bad definition is reported (not just the first) in the kernel's
// error_log shape.
//
//   DefinitionSources sources{.expressions = {"p libc.so.6:malloc %di"},
//                             .executable = "/usr/bin/ls"};
//   auto set = load_definitions(sources, std::cerr);
#ifndef DPROBE_CLI_PLAN_DEFINITIONS_H_
#define DPROBE_CLI_PLAN_DEFINITIONS_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/plan/analysis_options.h"
#include "lang/definition_set.h"

namespace dprobe::cli {

enum class SourceKind : uint8_t { kExpression, kFile };

struct DefinitionSources {
  std::vector<std::string> expressions;  // -e, in order
  std::vector<std::string> files;        // -f, in order
  std::string executable;                // -x, or the command to run
  // How -e and -f were interleaved on the command line, so that a removal
  // applies to what came before it. Empty: every -e, then every -f.
  std::vector<SourceKind> order;
  // --filter, --trigger, --stacktrace: applied to the events once loaded.
  AnalysisSources analysis;
};

// The loaded definitions, or nullopt when any was bad (all are reported).
// `follow`: one whose object is not found (a path in the root a followed
// child will have) is left to the programs that have it, and said.
std::optional<lang::DefinitionSet> load_definitions(const DefinitionSources& sources,
                                                    std::ostream& errors, bool follow = false);

// For another executable of the same trace (a traced process that exec'd):
// the definitions that resolve there; the lines of the others are listed
// in `unresolved`.
lang::DefinitionSet load_definitions_for(const DefinitionSources& sources,
                                         std::vector<std::string>* unresolved);

// Exit status for a bad definition, as the issue tracker and scripts expect.
inline constexpr int kExitBadDefinition = 2;

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PLAN_DEFINITIONS_H_
