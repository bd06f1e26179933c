// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/call_walk.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/strings.h"
#include "trace/formatter.h"

namespace dprobe::cli {
namespace {

using Kind = CallStep::Kind;

struct OpenCall {
  uint64_t address;
  std::string name;
  CallStep entry;
  std::string pair;  // a paired event's "GRP/BASE"; empty for a function
};

// Events a runtime fires around its own calls, SDT points in pairs:
// BASE__entry and BASE__return (python:function__*, hotspot:method__*),
// BASE__start and BASE__done (python:gc__*).
struct PairedEnd {
  std::string base;
  bool opens;
};

std::optional<PairedEnd> paired_end(std::string_view name) {
  for (const auto& [suffix, opens] :
       {std::pair{std::string_view("__entry"), true}, std::pair{std::string_view("__start"), true},
        std::pair{std::string_view("__return"), false},
        std::pair{std::string_view("__done"), false}}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      return PairedEnd{std::string(name.substr(0, name.size() - suffix.size())), opens};
    }
  }
  return std::nullopt;
}

// The value of argument `name` in a trace line's text ("func=\"visited\""
// gives visited), "" when it has none.
std::string arg_text(std::string_view line, std::string_view name) {
  const std::string key = " " + std::string(name) + "=";
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view value = line.substr(at + key.size());
  if (value.starts_with("\"")) {
    const size_t close = value.find('"', 1);
    return std::string(value.substr(1, close == std::string_view::npos ? close : close - 1));
  }
  return std::string(value.substr(0, value.find_first_of(" \n")));
}

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
    if (const auto pair = pair_of(record.stream, *step.event)) {
      return pair->opens ? enter_pair(step, pair->base) : leave_pair(step, pair->base);
    }
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
  // The pair an event is an end of, when the file has both of its events.
  std::optional<PairedEnd> pair_of(uint32_t stream, const trace::EventDesc& event) const {
    if (event.is_return) return std::nullopt;
    auto end = paired_end(event.name);
    if (!end) return std::nullopt;
    const std::string partners[] = {end->base + (end->opens ? "__return" : "__entry"),
                                    end->base + (end->opens ? "__done" : "__start")};
    for (const auto& [key, other] : file_.events) {
      if (key.first != stream || other.group != event.group) continue;
      for (const std::string& partner : partners) {
        if (other.name == partner) return end;
      }
    }
    return std::nullopt;
  }

  // A runtime's call by its own name: the `func` argument (Python's, with
  // its `file` and `line` where recorded), else the pair's.
  std::string pair_call_name(const CallStep& step, const std::string& base) {
    const std::string text = text_.line(*step.event, *step.record);
    std::string name = arg_text(text, "func");
    if (name.empty()) return base;
    const std::string where = arg_text(text, "file");
    const std::string line = arg_text(text, "line");
    if (!where.empty()) name += " (" + where + (line.empty() ? "" : ":" + line) + ")";
    return name;
  }

  void enter_pair(CallStep& step, const std::string& base) {
    std::vector<OpenCall>& open = open_[step.header.tid];
    step.kind = Kind::kEnter;
    step.depth = open.size();
    step.runtime_call = true;
    const std::string key = step.event->group + "/" + base;
    open.push_back({0, pair_call_name(step, base), step, key});
    open.back().entry.function = open.back().name;
    visitor_.step(open.back().entry);
  }

  // Closes the innermost open call of the pair; with none open, an event.
  void leave_pair(CallStep& step, const std::string& base) {
    std::vector<OpenCall>& open = open_[step.header.tid];
    const std::string key = step.event->group + "/" + base;
    for (size_t i = open.size(); i-- > 0;) {
      if (open[i].pair != key) continue;
      step.kind = Kind::kReturn;
      step.runtime_call = true;
      step.function = open[i].name;
      return close_call(open, i, step);
    }
    event_step(step);
  }

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
    open.push_back({address, std::move(name), step, {}});
    open.back().entry.function = open.back().name;
    visitor_.step(open.back().entry);
  }

  void return_step(CallStep& step, uint64_t address, const std::string& name) {
    std::vector<OpenCall>& open = open_[step.header.tid];
    step.kind = Kind::kReturn;
    step.function = name;
    for (size_t i = open.size(); i-- > 0;) {
      if (open[i].address == address) return close_call(open, i, step);
    }
    // No entry record (a return probe alone, or armed inside the call).
    step.depth = open.size();
    if (const auto entry = entry_time(step)) {
      step.has_duration = true;
      step.duration = step.header.timestamp > *entry ? step.header.timestamp - *entry : 0;
    }
    visitor_.step(step);
  }

  // The return `step` ends open[i]: the calls above it end unfinished.
  void close_call(std::vector<OpenCall>& open, size_t i, CallStep& step) {
    while (open.size() > i + 1) unfinished(open);
    const uint64_t entry = open[i].entry.header.timestamp;
    step.depth = i;
    step.entered = true;
    step.has_duration = true;
    step.duration = step.header.timestamp > entry ? step.header.timestamp - entry : 0;
    visitor_.step(step);
    open.pop_back();
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
  RecordText text_{file_};
};

}  // namespace

std::string RecordText::line(const trace::EventDesc& event, const trace::FileRecord& record) {
  auto& entry = formatters_[record.stream];
  if (!entry.second) {
    entry.first = std::make_unique<trace::FileSymbolizer>(file_, record.stream);
    entry.second = std::make_unique<trace::TraceFormatter>(entry.first.get());
  }
  std::string text;
  entry.second->format_text(event, std::as_bytes(std::span(record.bytes)), record.comm, text);
  return text;
}

void walk_calls(const trace::TraceFileContents& file, CallVisitor& visitor) {
  Walker walker(file, visitor);
  for (const trace::FileRecord& record : file.records) walker.add(record);
  walker.finish();
}

}  // namespace dprobe::cli
