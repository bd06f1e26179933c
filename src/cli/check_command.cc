// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/check_command.h"

#include <ostream>

#include "lang/format_definition.h"
#include "trace/event_format.h"

namespace dprobe::cli {

int run_check(const CheckOptions& options, std::ostream& out, std::ostream& errors) {
  auto set = load_definitions(options.sources, errors);
  if (!set) return kExitBadDefinition;
  for (const trace::ProbeSpec& spec : set->specs()) {
    out << lang::format_definition(spec) << "\n";
    if (options.show_format) out << trace::format_description(spec.event) << "\n";
  }
  return 0;
}

}  // namespace dprobe::cli
