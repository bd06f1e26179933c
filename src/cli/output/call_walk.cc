// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/call_walk.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/strings.h"

namespace dprobe::cli {
namespace {

using Kind = CallStep::Kind;

struct OpenCall {
  uint64_t address;
  std::string name;
  CallStep entry;
};

class Walker {
 public:
  Walker(const trace::TraceFileContents& file, CallVisitor& visitor)
      : file_(file), visitor_(visitor) {
    // Only a function some return record closes is a call: an entry probe
    // alone (`p malloc`) would open one per hit and never close it.
    for (const trace::FileRecord& record : file.records) {
      const auto header = trace::load_field<trace::RecordHeader>(record.bytes.data(), 0);
      const auto event = file.events.find({record.stream, header.type});
      if (event == file.events.end() || !event->second.is_return ||
          record.bytes.size() < trace::EventDesc::kFuncOffset + sizeof(uint64_t)) {
        continue;
      }
      returning_.insert({record.stream, trace::load_field<uint64_t>(
                                            record.bytes.data(), trace::EventDesc::kFuncOffset)});
    }
  }

  void add(const trace::FileRecord& record) {
    CallStep step;
    step.record = &record;
    step.header = trace::load_field<trace::RecordHeader>(record.bytes.data(), 0);
    const auto event = file_.events.find({record.stream, step.header.type});
    if (event == file_.events.end()) return;
    step.event = &event->second;
    const bool is_return = step.event->is_return;
    const uint32_t at = is_return ? trace::EventDesc::kFuncOffset : trace::EventDesc::kIpOffset;
    const bool probe = step.event->source == trace::EventSource::kProbe;
    if (!probe || record.bytes.size() < at + sizeof(uint64_t)) return event_step(step);
    const auto address = trace::load_field<uint64_t>(record.bytes.data(), at);
    const auto symbol = symbolizer(record.stream).symbolize(address);
    std::string name = symbol ? std::string(symbol->name) : hex(address);
    if (is_return) return return_step(step, address, std::move(name));
    // Inside a function, by its symbol: an event. An address no symbol
    // names (an IFUNC's implementation in a stripped library) is taken for
    // the function its probe was put on.
    if (symbol && symbol->offset != 0) return event_step(step);
    if (!opens_a_call(record.stream, address, step.header.type)) return event_step(step);
    enter_step(step, address, std::move(name));
  }

  void finish() {
    for (auto& [tid, open] : open_) {
      while (!open.empty()) unfinished(open);
    }
  }

 private:
  // Whether an entry record of `event` at `address` opens a call: the
  // function returns somewhere in the file, and of several entry probes on
  // it (`p f` beside `p f x=%di`) the first seen is the one that opens.
  bool opens_a_call(uint32_t stream, uint64_t address, uint16_t event) {
    if (returning_.count({stream, address}) == 0) return false;
    const auto [chosen, added] = call_events_.emplace(std::pair{stream, address}, event);
    return added || chosen->second == event;
  }

  const trace::FileSymbolizer& symbolizer(uint32_t stream) {
    auto& slot = symbolizers_[stream];
    if (!slot) slot = std::make_unique<trace::FileSymbolizer>(file_, stream);
    return *slot;
  }

  void event_step(CallStep& step) {
    step.kind = Kind::kEvent;
    step.depth = open_[step.header.tid].size();
    visitor_.step(step);
  }

  void enter_step(CallStep& step, uint64_t address, std::string name) {
    std::vector<OpenCall>& open = open_[step.header.tid];
    step.kind = Kind::kEnter;
    step.depth = open.size();
    open.push_back({address, std::move(name), step});
    open.back().entry.function = open.back().name;
    visitor_.step(open.back().entry);
  }

  void return_step(CallStep& step, uint64_t address, const std::string& name) {
    std::vector<OpenCall>& open = open_[step.header.tid];
    step.kind = Kind::kReturn;
    step.function = name;
    for (size_t i = open.size(); i-- > 0;) {
      if (open[i].address != address) continue;
      while (open.size() > i + 1) unfinished(open);
      const uint64_t entry = open[i].entry.header.timestamp;
      step.depth = i;
      step.entered = true;
      step.has_duration = true;
      step.duration = step.header.timestamp > entry ? step.header.timestamp - entry : 0;
      visitor_.step(step);
      open.pop_back();
      return;
    }
    // No entry record (a return probe alone, or armed inside the call).
    step.depth = open.size();
    if (const auto entry = entry_time(step)) {
      step.has_duration = true;
      step.duration = step.header.timestamp > *entry ? step.header.timestamp - *entry : 0;
    }
    visitor_.step(step);
  }

  void unfinished(std::vector<OpenCall>& open) {
    CallStep step = open.back().entry;
    step.kind = Kind::kUnfinished;
    step.function = open.back().name;
    visitor_.step(step);
    open.pop_back();
  }

  // A return record's entry time, where its event keeps one.
  static std::optional<uint64_t> entry_time(const CallStep& step) {
    const uint32_t at = step.event->entry_time_offset;
    if (at == 0 || step.record->bytes.size() < at + sizeof(uint64_t)) return std::nullopt;
    return trace::load_field<uint64_t>(step.record->bytes.data(), at);
  }

  const trace::TraceFileContents& file_;
  CallVisitor& visitor_;
  std::map<uint32_t, std::vector<OpenCall>> open_;     // by thread
  std::set<std::pair<uint32_t, uint64_t>> returning_;  // (stream, function) some return closes
  std::map<std::pair<uint32_t, uint64_t>, uint16_t> call_events_;  // the entry event that opens
  std::map<uint32_t, std::unique_ptr<trace::FileSymbolizer>> symbolizers_;
};

}  // namespace

void walk_calls(const trace::TraceFileContents& file, CallVisitor& visitor) {
  Walker walker(file, visitor);
  for (const trace::FileRecord& record : file.records) walker.add(record);
  walker.finish();
}

}  // namespace dprobe::cli
