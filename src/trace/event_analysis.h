// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the agent does with an event's hit besides (or instead of) writing
// its record, the way the kernel's event filter and triggers act on an
// event: --filter drops hits that do not pass, before a record is
// written; --trigger 'hist:...' aggregates them into the thread's hist
// tables; --stacktrace adds the user stack (EventDesc::stack_offset).
//
//   auto analysis = std::make_shared<EventAnalysis>();
//   analysis->filter = *lang::compile_filter("size > 4096", fields);
//   event.analysis = analysis;
#ifndef DPROBE_TRACE_EVENT_ANALYSIS_H_
#define DPROBE_TRACE_EVENT_ANALYSIS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "trace/hist_spec.h"
#include "trace/hit/event_filter.h"
#include "trace/hit/hist_table.h"

namespace dprobe::trace {

// One hist trigger of an event, and where its table is in every slot's
// hist tables (TraceMemory::hist_tables).
struct HistTrigger {
  HistSpec spec;
  FilterProgram filter;                  // the trigger's own "if FILTER"; empty: every hit
  std::vector<FilterStep> filter_steps;  // the agent's (plan_analysis)
  uint64_t table_offset = 0;
  uint64_t table_bytes = 0;
  // The agent's own, worked out when the event arrives (not sent): what a
  // hit needs of the spec's table (plan_analysis).
  HistPlan plan;
};

struct EventAnalysis {
  FilterProgram filter;  // --filter; empty: every hit passes
  // The agent's own, worked out when the event arrives (not sent): the
  // filter's steps (plan_analysis).
  std::vector<FilterStep> filter_steps;
  std::vector<HistTrigger> hists;
  // An event with a hist trigger is aggregated, not recorded: as the
  // kernel's event that has a trigger but is not enabled.
  bool records() const { return hists.empty(); }
  // The hits need the user stack: for the record, or as a hist key.
  bool needs_stack(const EventDesc& event) const;
};

// `analysis` with its filters' steps and its hist tables' plans worked
// out, as the agent runs them.
std::shared_ptr<const EventAnalysis> plan_analysis(const EventAnalysis& analysis);

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_EVENT_ANALYSIS_H_
