// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/probe_error.h"

namespace dprobe::lang {

std::string render_error(const ProbeError& error, std::string_view program) {
  constexpr std::string_view kCommandLabel = "  Command: ";
  std::string out;
  out.append(program).append(": error: ");
  out.append(error_message(error.code));
  out.append(" (").append(error_name(error.code)).append(")");
  if (!error.origin.empty()) out.append(" at ").append(error.origin);
  out.push_back('\n');
  out.append(kCommandLabel).append(error.command).push_back('\n');
  out.append(kCommandLabel.size() + error.column, ' ').append("^\n");
  if (!error.detail.empty()) out.append("  ").append(error.detail).push_back('\n');
  for (const std::string& note : error.notes) out.append("    ").append(note).push_back('\n');
  return out;
}

}  // namespace dprobe::lang
