// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/probe_list.h"

#include <fmt/format.h>

#include "cli/output/terminal_text.h"

namespace dprobe::cli {
std::optional<std::string> symbol_location(uint64_t address, const trace::Symbolizer& symbolizer) {
  const auto hit = symbolizer.symbolize(address);
  if (!hit) return std::nullopt;
  return fmt::format("{}+{:#x}/{:#x}", hit->name, hit->offset, hit->size);
}

std::string render_probe_states(const std::vector<core::ProbeState>& states,
                                const trace::Symbolizer& symbolizer) {
  std::string out;
  for (const core::ProbeState& state : states) {
    const std::string how =
        state.optimized ? "[OPTIMIZED]" : "[BREAKPOINT: " + printable(state.reason) + "]";
    out += fmt::format(
        "{:016x}  {}  {}\n", state.address,
        symbol_location(state.address, symbolizer).value_or(fmt::format("{:#x}", state.address)),
        how);
  }
  return out;
}

}  // namespace dprobe::cli
