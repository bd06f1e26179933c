// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/event_analysis.h"

namespace dprobe::trace {

bool EventAnalysis::needs_stack(const EventDesc& event) const {
  if (event.stack_offset != 0 && records()) return true;
  for (const HistTrigger& hist : hists) {
    for (const HistKey& key : hist.spec.keys) {
      if (key.stacktrace) return true;
    }
  }
  return false;
}

std::shared_ptr<const EventAnalysis> plan_analysis(const EventAnalysis& analysis) {
  auto planned = std::make_shared<EventAnalysis>(analysis);
  planned->filter_steps = plan_filter(planned->filter);
  for (HistTrigger& hist : planned->hists) {
    hist.plan = hist_plan(hist.spec);
    hist.filter_steps = plan_filter(hist.filter);
  }
  return planned;
}

}  // namespace dprobe::trace
