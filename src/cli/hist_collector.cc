// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/hist_collector.h"

#include "trace/event_analysis.h"
#include "trace/hist_format.h"

namespace dprobe::cli {
namespace {

// An entry's keys as one string, to find equal keys across processes.
std::string encode_keys(const trace::HistEntry& entry) {
  std::string out;
  for (const trace::HistKeyValue& key : entry.keys) {
    out.append(std::to_string(key.number)).push_back('\x1f');
    out.append(key.text).push_back('\x1f');
    for (uint64_t frame : key.frames) out.append(std::to_string(frame)).push_back(',');
    out.push_back('\x1e');
  }
  return out;
}

// Adds one process's hist to the total, as the tables of one process are
// merged: equal keys summed, new keys past `size` dropped with their hits.
void add_result(const trace::HistSpec& spec, const trace::HistResult& from, trace::HistResult& into,
                std::map<std::string, size_t>& index) {
  into.dropped += from.dropped;
  for (const trace::HistEntry& entry : from.entries) {
    const std::string key = encode_keys(entry);
    const auto found = index.find(key);
    if (found != index.end()) {
      trace::HistEntry& kept = into.entries[found->second];
      kept.hitcount += entry.hitcount;
      for (size_t i = 0; i < kept.vals.size() && i < entry.vals.size(); ++i) {
        kept.vals[i] += entry.vals[i];
      }
    } else if (into.entries.size() >= spec.size) {
      into.dropped += entry.hitcount;
      continue;
    } else {
      index.emplace(key, into.entries.size());
      into.entries.push_back(entry);
    }
    into.hits += entry.hitcount;
  }
}

}  // namespace

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
  hists_.push_back({event, spec, {}, {}});
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
      trace::HistResult process;
      for (uint32_t slot = 0; slot < memory.slot_count(); ++slot) {
        // A slot no thread ever took has an empty table: not even looked at.
        if (memory.slot(slot).generation.load(std::memory_order_acquire) == 0) continue;
        if (trigger.table_offset + trigger.table_bytes > memory.hist_slot_bytes()) continue;
        trace::hist_merge(process, memory.hist_tables(slot) + trigger.table_offset,
                          trigger.table_bytes, trigger.spec);
      }
      keep_names(trigger.spec, process, symbols);
      Hist& hist = hist_for(event.group + "/" + event.name, trigger.spec);
      add_result(trigger.spec, process, hist.result, hist.index);
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
