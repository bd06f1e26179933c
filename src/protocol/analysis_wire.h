// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// An event's analysis (trace/event_analysis.h: its filter program and hist
// triggers) on the wire, inside the event's ProbeSpec. The decoder checks
// shapes only (counts, enum ranges); whether the fields and tables fit the
// event and the trace memory is the agent's check when it keeps the event.
//
//   put_analysis(w, event.analysis.get());
//   event.analysis = get_analysis(r);   // null for none
#ifndef DPROBE_PROTOCOL_ANALYSIS_WIRE_H_
#define DPROBE_PROTOCOL_ANALYSIS_WIRE_H_

#include <memory>

#include "protocol/wire.h"
#include "trace/event_analysis.h"

namespace dprobe::protocol {

void put_analysis(WireWriter& w, const trace::EventAnalysis* analysis);
std::shared_ptr<const trace::EventAnalysis> get_analysis(WireReader& r);

}  // namespace dprobe::protocol

#endif  // DPROBE_PROTOCOL_ANALYSIS_WIRE_H_
