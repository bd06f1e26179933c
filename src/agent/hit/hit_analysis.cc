// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit/hit_analysis.h"

#include "agent/hit/stack_trace.h"
#include "base/hit_path.h"
#include "core/hit/stack_unwind.h"
#include "trace/event_analysis.h"
#include "trace/hit/hist_table.h"
#include "trace/record.h"

namespace dprobe::agent {
namespace {

using trace::EventAnalysis;

// Appends the stack's return addresses after the record's strings and
// points its stack field at them; as many frames as fit `capacity`.
DPROBE_HIT_PATH void store_stack(const trace::EventDesc& event, const uint64_t* pcs, uint32_t depth,
                                 std::byte* record, uint32_t& size, uint32_t capacity) noexcept {
  const uint32_t room = capacity > size ? (capacity - size) / 8 : 0;
  if (depth > room) depth = room;
  for (uint32_t i = 0; i < depth; ++i) __builtin_memcpy(record + size + i * 8, &pcs[i], 8);
  trace::store_field<uint32_t>(record, event.stack_offset, trace::make_data_loc(size, depth * 8));
  size += depth * 8;
}

// The user stack, unwound at most once a hit, and only if something
// wants it.
struct LazyStack {
  // pcs stays unwritten until take(): zeroing it would cost a memset call.
  explicit LazyStack(const AnalyzedRecord& record) noexcept : hit(record) {}

  const AnalyzedRecord& hit;
  uint64_t pcs[core::kMaxStackDepth];
  uint32_t depth = 0;
  bool taken = false;

  void take() noexcept {
    if (taken) return;
    taken = true;
    depth = capture_user_stack(hit.regs, hit.memory, pcs, core::kMaxStackDepth);
  }
};

DPROBE_HIT_PATH void add_to_hists(const EventAnalysis& analysis, const trace::HitFields& fields,
                                  bool needs_stack, LazyStack& stack, const ThreadTrace& thread,
                                  const trace::TraceMemory& memory) noexcept {
  std::byte* tables = memory.hist_tables(thread.slot);
  for (const trace::HistTrigger& hist : analysis.hists) {
    if (!hist.filter.empty() &&
        !trace::filter_matches(hist.filter, hist.filter_steps.data(), fields)) {
      continue;
    }
    if (needs_stack) stack.take();
    trace::hist_update(tables + hist.table_offset, hist.spec, hist.plan, fields, stack.pcs,
                       stack.depth);
  }
}

bool field_fits(const trace::RecordField& field, const trace::EventDesc& event) {
  if (field.source == trace::FieldSource::kComm || field.source == trace::FieldSource::kDuration) {
    return true;
  }
  const uint32_t size = field.source == trace::FieldSource::kString ? 4 : field.size;
  return (size == 1 || size == 2 || size == 4 || size == 8) && field.offset <= event.fixed_size &&
         size <= event.fixed_size - field.offset;
}

bool filter_fits(const trace::FilterProgram& filter, const trace::EventDesc& event) {
  if (filter.empty()) return true;
  if (!trace::filter_program_valid(filter)) return false;
  for (const trace::RecordField& field : filter.fields) {
    if (!field_fits(field, event)) return false;
  }
  return true;
}

bool hist_fits(const trace::HistTrigger& hist, const trace::EventDesc& event,
               const trace::TraceMemory& memory) {
  const uint64_t bytes = trace::hist_table_bytes(hist.spec);
  if (bytes == 0 || hist.table_bytes != bytes || hist.table_offset % 64 != 0 ||
      hist.table_offset > memory.hist_slot_bytes() ||
      bytes > memory.hist_slot_bytes() - hist.table_offset) {
    return false;
  }
  for (const auto* keys : {&hist.spec.keys, &hist.spec.vals}) {
    for (const trace::HistKey& key : *keys) {
      if (!key.stacktrace && !field_fits(key.field, event)) return false;
    }
  }
  return filter_fits(hist.filter, event);
}

}  // namespace

DPROBE_HIT_PATH bool analyze_hit(const AgentEvent& event, const AnalyzedRecord& hit,
                                 ThreadTrace& thread, const trace::TraceMemory& memory) noexcept {
  const EventAnalysis& analysis = *event.desc.analysis;
  const trace::HitFields fields{hit.record, thread.comm, hit.duration_ns};
  LazyStack stack(hit);
  // The hist triggers see every hit, as the kernel calls an event's
  // triggers before its filter decides whether the record is kept; each
  // trigger's own "if" filter applies to it alone.
  if (!analysis.hists.empty())
    add_to_hists(analysis, fields, event.needs_stack, stack, thread, memory);
  if (!analysis.filter.empty() &&
      !trace::filter_matches(analysis.filter, analysis.filter_steps.data(), fields)) {
    count_filtered(thread, memory.counter(event.desc.id), event.desc.id);
    return false;
  }
  if (!analysis.records()) return false;
  if (event.desc.stack_offset != 0) {
    stack.take();
    store_stack(event.desc, stack.pcs, stack.depth, hit.record, hit.size, event.max_record);
  }
  return true;
}

bool analysis_fits(const trace::EventDesc& event, const trace::TraceMemory& memory) {
  if (event.stack_offset != 0 && (event.stack_offset < trace::first_arg_offset(event.is_return) ||
                                  event.stack_offset + 4 > event.fixed_size)) {
    return false;
  }
  if (!event.analysis) return true;
  if (!filter_fits(event.analysis->filter, event)) return false;
  for (const trace::HistTrigger& hist : event.analysis->hists) {
    if (!hist_fits(hist, event, memory)) return false;
  }
  return true;
}

uint32_t stack_record_bytes(const trace::EventDesc& event) {
  return event.stack_offset != 0 ? core::kMaxStackDepth * 8 : 0;
}

}  // namespace dprobe::agent
