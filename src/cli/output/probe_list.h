// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `--probes`: each placed probe as the kernel's debugfs kprobes/list shows
// it, with how it is armed: [OPTIMIZED] (a jump to its trampoline) or
// [BREAKPOINT: why it could not be optimized].
//
//   00007f3a2c8a1120  malloc+0x0/0x1a4  [OPTIMIZED]
//   00007f3a2c8a1570  free+0x0/0x101  [BREAKPOINT: indirect jump (jump table?)]
#ifndef DPROBE_CLI_OUTPUT_PROBE_LIST_H_
#define DPROBE_CLI_OUTPUT_PROBE_LIST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "trace/symbolizer.h"

namespace dprobe::cli {

// One line per state, addresses as 16 hex digits, locations as sym+off/size
// (the bare address when no symbol covers it).
std::string render_probe_states(const std::vector<core::ProbeState>& states,
                                const trace::Symbolizer& symbolizer);

// "sym+0x0/0x40" for an address a symbol covers, else nullopt.
std::optional<std::string> symbol_location(uint64_t address, const trace::Symbolizer& symbolizer);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_PROBE_LIST_H_
