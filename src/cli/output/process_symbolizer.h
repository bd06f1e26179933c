// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Names run-time addresses of the traced process for the trace line:
// sym+0xoff/0xsize, from the ELF symbols of the objects it has loaded, and
// for an address in none of them (JIT code) from the process's perf map
// (cli/output/perf_map.h), whose object is "[JIT] tid PID" as perf says.
//
//   ProcessSymbolizer symbolizer(objects, PerfMap::of_process(pid, own_pid));
//   TraceFormatter formatter(&symbolizer);
#ifndef DPROBE_CLI_OUTPUT_PROCESS_SYMBOLIZER_H_
#define DPROBE_CLI_OUTPUT_PROCESS_SYMBOLIZER_H_

#include <memory>

#include "cli/output/perf_map.h"
#include "cli/plan/probe_plan.h"
#include "trace/symbolizer.h"

namespace dprobe::cli {

class ProcessSymbolizer : public trace::Symbolizer {
 public:
  explicit ProcessSymbolizer(const ProcessObjects& objects,
                             std::unique_ptr<PerfMap> perf_map = nullptr)
      : objects_(objects), perf_map_(std::move(perf_map)) {}
  std::optional<trace::SymbolHit> symbolize(uint64_t address) const override;
  std::string_view object_name(uint64_t address) const override;
  // Reads the perf map again now.
  void refresh() const override;

 private:
  const ProcessObjects& objects_;
  std::unique_ptr<PerfMap> perf_map_;  // null: no JIT names
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_PROCESS_SYMBOLIZER_H_
