// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/perfetto.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "trace/formatter.h"
#include "trace/json.h"
#include "trace/record.h"

namespace dprobe::cli {
namespace {

// A record read for the timeline.
struct Hit {
  const trace::EventDesc* event;
  const trace::FileRecord* record;
  trace::RecordHeader header;
  uint64_t address;  // the entry's ip, or the return's function
};

// Trace-clock ns as the format's microseconds.
std::string micros(uint64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

class Timeline {
 public:
  explicit Timeline(const trace::TraceFileContents& file) : file_(file) {}

  void add(const Hit& hit) {
    names(hit);
    std::vector<Hit>& open = open_[hit.header.tid];
    if (!hit.event->is_return) {
      open.push_back(hit);
      return;
    }
    // The innermost open call of this function; calls above it (left by
    // longjmp or an exception) are closed as instants.
    for (size_t i = open.size(); i-- > 0;) {
      if (open[i].address != hit.address) continue;
      for (size_t j = open.size(); --j > i;) instant(open[j]);
      slice(open[i], hit);
      open.resize(i);
      return;
    }
    // No entry event: the return record's own entry time begins the slice.
    if (const auto entry = entry_time(hit)) return returned_slice(hit, *entry);
    instant(hit);
  }

  std::string finish() {
    for (auto& [tid, open] : open_) {
      for (const Hit& hit : open) instant(hit);
    }
    for (const auto& [pid, name] : processes_) metadata("process_name", pid, pid, name);
    for (const auto& [tid, thread] : threads_) {
      metadata("thread_name", thread.first, tid, thread.second);
    }
    return "{\"traceEvents\":[\n" + events_ + "\n],\"displayTimeUnit\":\"ns\"}\n";
  }

 private:
  void names(const Hit& hit) {
    threads_[hit.header.tid] = {hit.header.pid, hit.record->comm};
    if (hit.header.tid == hit.header.pid || processes_.count(hit.header.pid) == 0) {
      processes_[hit.header.pid] = hit.record->comm;
    }
  }

  trace::TraceFormatter& formatter(uint32_t stream) {
    auto& entry = formatters_[stream];
    if (!entry.second) {
      entry.first = std::make_unique<trace::FileSymbolizer>(file_, stream);
      entry.second = std::make_unique<trace::TraceFormatter>(entry.first.get());
    }
    return *entry.second;
  }

  // The record as `report --json` prints it, without its newline.
  std::string record_json(const Hit& hit) {
    std::string out;
    formatter(hit.record->stream)
        .format_json(*hit.event, std::as_bytes(std::span(hit.record->bytes)), hit.record->comm,
                     out);
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  void begin(std::string_view name, std::string_view category, const trace::RecordHeader& header) {
    if (!events_.empty()) events_ += ",\n";
    events_ += "{\"name\":";
    trace::append_json_string(events_, name);
    events_ += ",\"cat\":";
    trace::append_json_string(events_, category);
    events_ += fmt::format(",\"pid\":{},\"tid\":{},\"ts\":{}", header.pid, header.tid,
                           micros(header.timestamp));
  }

  void instant(const Hit& hit) {
    begin(hit.event->name, hit.event->group, hit.header);
    events_ += ",\"ph\":\"i\",\"s\":\"t\",\"args\":" + record_json(hit) + "}";
  }

  void slice(const Hit& entry, const Hit& exit) {
    const uint64_t end = std::max(exit.header.timestamp, entry.header.timestamp);
    begin(entry.event->name, entry.event->group, entry.header);
    events_ += ",\"ph\":\"X\",\"dur\":" + micros(end - entry.header.timestamp) +
               ",\"args\":{\"entry\":" + record_json(entry) + ",\"return\":" + record_json(exit) +
               "}}";
  }

  // A return record's entry time (trace-clock ns), if it has one.
  static std::optional<uint64_t> entry_time(const Hit& hit) {
    const uint32_t at = hit.event->entry_time_offset;
    if (at == 0 || hit.record->bytes.size() < at + sizeof(uint64_t)) return std::nullopt;
    return trace::load_field<uint64_t>(hit.record->bytes.data(), at);
  }

  void returned_slice(const Hit& exit, uint64_t entry) {
    trace::RecordHeader start = exit.header;
    start.timestamp = std::min(entry, exit.header.timestamp);
    begin(exit.event->name, exit.event->group, start);
    events_ += ",\"ph\":\"X\",\"dur\":" + micros(exit.header.timestamp - start.timestamp) +
               ",\"args\":{\"return\":" + record_json(exit) + "}}";
  }

  void metadata(std::string_view kind, uint32_t pid, uint32_t tid, std::string_view name) {
    if (!events_.empty()) events_ += ",\n";
    events_ += fmt::format(
        "{{\"name\":\"{}\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":", kind, pid,
        tid);
    trace::append_json_string(events_, name);
    events_ += "}}";
  }

  const trace::TraceFileContents& file_;
  std::map<uint32_t, std::vector<Hit>> open_;  // by tid: entries not yet returned
  std::map<uint32_t, std::string> processes_;
  std::map<uint32_t, std::pair<uint32_t, std::string>> threads_;  // tid -> pid, name
  std::map<uint32_t, std::pair<std::unique_ptr<trace::FileSymbolizer>,
                               std::unique_ptr<trace::TraceFormatter>>>
      formatters_;
  std::string events_;
};

}  // namespace

std::string perfetto_json(const trace::TraceFileContents& file) {
  Timeline timeline(file);
  for (const trace::FileRecord& record : file.records) {
    const auto header = trace::load_field<trace::RecordHeader>(record.bytes.data(), 0);
    const auto event = file.events.find({record.stream, header.type});
    if (event == file.events.end()) continue;
    const uint32_t at =
        event->second.is_return ? trace::EventDesc::kFuncOffset : trace::EventDesc::kIpOffset;
    if (record.bytes.size() < at + sizeof(uint64_t)) continue;
    timeline.add(
        {&event->second, &record, header, trace::load_field<uint64_t>(record.bytes.data(), at)});
  }
  return timeline.finish();
}

}  // namespace dprobe::cli
