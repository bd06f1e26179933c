// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Names run-time addresses of the traced process for the trace line:
// sym+0xoff/0xsize, from the ELF symbols of the objects it has loaded.
//
//   ProcessSymbolizer symbolizer(objects);
//   TraceFormatter formatter(&symbolizer);
#ifndef DPROBE_CLI_OUTPUT_PROCESS_SYMBOLIZER_H_
#define DPROBE_CLI_OUTPUT_PROCESS_SYMBOLIZER_H_

#include "cli/plan/probe_plan.h"
#include "trace/symbolizer.h"

namespace dprobe::cli {

class ProcessSymbolizer : public trace::Symbolizer {
 public:
  explicit ProcessSymbolizer(const ProcessObjects& objects) : objects_(objects) {}
  std::optional<trace::SymbolHit> symbolize(uint64_t address) const override;
  std::string_view object_name(uint64_t address) const override;

 private:
  const ProcessObjects& objects_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_PROCESS_SYMBOLIZER_H_
