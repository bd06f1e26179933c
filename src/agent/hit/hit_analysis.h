// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// An event's analysis (trace/event_analysis.h) on a hit, right after its
// fetch programs wrote the record: the filter decides whether the hit is
// kept, the user stack is unwound where the record or a hist key wants
// it, and the hist triggers add the hit to the thread's own tables.
//
//   uint32_t size = trace::store_event_args(...);
//   if (event.analysis != nullptr &&
//       !analyze_hit(event, {record, size, regs, duration}, thread, memory)) {
//     return;  // filtered out or aggregated: the reservation is abandoned
//   }
//   thread.writer().commit(size);
//
// No allocation, no lock, no libc call: it runs where the hit runs.
#ifndef DPROBE_AGENT_HIT_ANALYSIS_H_
#define DPROBE_AGENT_HIT_ANALYSIS_H_

#include <cstddef>
#include <cstdint>

#include "agent/agent_state.h"
#include "agent/hit/thread_trace.h"
#include "arch/probe_insn.h"
#include "trace/hit/fetch_exec.h"
#include "trace/trace_memory.h"

namespace dprobe::agent {

// The record a hit just wrote, and what else its analysis may need.
struct AnalyzedRecord {
  std::byte* record;
  uint32_t& size;  // grows by the user stack where the record keeps it
  const arch::SavedRegs& regs;
  uint64_t duration_ns;  // return events: since the entry
  // The reads the hit's fetches make (a probe that may run with every
  // signal blocked reads without faulting): the stack is read the same way.
  const trace::MemoryReader& memory;
};

// False when the hit writes no record: its filter turned it away (counted
// as filtered), or its event is aggregated by hist triggers instead.
bool analyze_hit(const AgentEvent& event, const AnalyzedRecord& hit, ThreadTrace& thread,
                 const trace::TraceMemory& memory) noexcept;

// Whether `analysis`'s fields lie inside `event`'s records and its hist
// tables inside the trace memory's: checked once, when the event arrives
// (the CLI compiled it, but the agent trusts no byte it is sent).
bool analysis_fits(const trace::EventDesc& event, const trace::TraceMemory& memory);

// Room a record of `event` needs past its strings for its user stack.
uint32_t stack_record_bytes(const trace::EventDesc& event);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_HIT_ANALYSIS_H_
