// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/hist_collector.h"

#include "trace/event_analysis.h"
#include "trace/hist_format.h"

namespace dprobe::cli {

void KeptSymbols::keep(uint64_t address, const trace::Symbolizer& from) {
  if (names_.count(address) != 0) return;
  Name name;
  if (const auto hit = from.symbolize(address)) {
    name = {true, std::string(hit->name), hit->offset, hit->size, {}};
  }
  name.object = std::string(from.object_name(address));
  names_.emplace(address, std::move(name));
}

std::optional<trace::SymbolHit> KeptSymbols::symbolize(uint64_t address) const {
  const auto found = names_.find(address);
  if (found == names_.end() || !found->second.known) return std::nullopt;
  return trace::SymbolHit{found->second.name, found->second.offset, found->second.size};
}

std::string_view KeptSymbols::object_name(uint64_t address) const {
  const auto found = names_.find(address);
  return found == names_.end() ? std::string_view() : std::string_view(found->second.object);
}

HistCollector::Hist& HistCollector::hist_for(const std::string& event,
                                             const trace::HistSpec& spec) {
  for (Hist& hist : hists_) {
    if (hist.event == event && hist.spec.text == spec.text) return hist;
  }
  hists_.push_back({event, spec, {}});
  return hists_.back();
}

void HistCollector::keep_names(const trace::HistSpec& spec, const trace::HistResult& result,
                               const trace::Symbolizer& symbols) {
  for (const trace::HistEntry& entry : result.entries) {
    for (size_t k = 0; k < spec.keys.size() && k < entry.keys.size(); ++k) {
      const trace::HistKey& key = spec.keys[k];
      for (uint64_t frame : entry.keys[k].frames) symbols_.keep(frame, symbols);
      if (key.has(trace::kHistSym) || key.has(trace::kHistSymOffset)) {
        symbols_.keep(entry.keys[k].number, symbols);
      }
    }
  }
}

void HistCollector::add(const trace::TraceMemory& memory, const lang::DefinitionSet& set,
                        const trace::Symbolizer& symbols) {
  for (const trace::ProbeSpec& probe : set.specs()) {
    const trace::EventDesc& event = probe.event;
    if (!event.analysis) continue;
    for (const trace::HistTrigger& trigger : event.analysis->hists) {
      if (trigger.table_offset + trigger.table_bytes > memory.hist_slot_bytes()) continue;
      trace::HistResult process;
      for (uint32_t slot = 0; slot < memory.slot_count(); ++slot) {
        // A slot no thread ever took has an empty table: not even looked at.
        if (memory.slot(slot).generation.load(std::memory_order_acquire) == 0) continue;
        trace::hist_merge(process, memory.hist_tables(slot) + trigger.table_offset,
                          trigger.table_bytes, trigger.spec);
      }
      keep_names(trigger.spec, process, symbols);
      Hist& hist = hist_for(event.group + "/" + event.name, trigger.spec);
      trace::hist_merge_result(hist.result, process, trigger.spec);
    }
  }
}

std::string HistCollector::render() const {
  std::string out;
  for (const Hist& hist : hists_) {
    if (!out.empty()) out.push_back('\n');
    out += trace::format_hist(hist.spec, hist.event, hist.result, &symbols_);
  }
  return out;
}

}  // namespace dprobe::cli
