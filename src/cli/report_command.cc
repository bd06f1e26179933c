// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/report_command.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <ostream>
#include <span>

#include "cli/line_writer.h"
#include "cli/perfetto.h"
#include "cli/terminal_text.h"
#include "trace/formatter.h"
#include "trace/record.h"
#include "trace/trace_file.h"

namespace dprobe::cli {
namespace {

constexpr int kExitFailure = 1;

// One stream's symbols and formatter (each process image of the trace).
struct StreamFormatter {
  std::unique_ptr<trace::FileSymbolizer> symbols;
  std::unique_ptr<trace::TraceFormatter> formatter;
};

// Every record as text or JSON lines, in file order (time order already).
// Returns how many records name an event the file does not describe.
uint64_t format_records(const trace::TraceFileContents& file, bool json, std::string& out) {
  std::map<uint32_t, StreamFormatter> streams;
  uint64_t unknown = 0;
  for (const trace::FileRecord& record : file.records) {
    const auto type = trace::load_field<uint16_t>(record.bytes.data(), 0);
    const auto event = file.events.find({record.stream, type});
    if (event == file.events.end()) {
      ++unknown;
      continue;
    }
    StreamFormatter& stream = streams[record.stream];
    if (!stream.formatter) {
      stream.symbols = std::make_unique<trace::FileSymbolizer>(file, record.stream);
      stream.formatter = std::make_unique<trace::TraceFormatter>(stream.symbols.get());
    }
    const auto bytes = std::as_bytes(std::span(record.bytes));
    if (json) {
      stream.formatter->format_json(event->second, bytes, record.comm, out);
    } else {
      stream.formatter->format_text(event->second, bytes, record.comm, out);
    }
  }
  return unknown;
}

template <typename T>
bool any_or_in(const std::vector<T>& wanted, T value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

bool event_wanted(const std::vector<std::string>& wanted, const trace::EventDesc& event) {
  return wanted.empty() || any_or_in(wanted, event.name) ||
         any_or_in(wanted, event.group + "/" + event.name);
}

// In whole microseconds, as the lines print the time: a time copied from a
// line keeps that line, whatever nanoseconds the record has beyond it.
bool time_wanted(const ReportFilter& filter, uint64_t ns) {
  const auto micros = static_cast<int64_t>(ns / 1000);
  const auto bound = [](double seconds) { return std::llround(seconds * 1e6); };
  return (filter.since < 0 || micros >= bound(filter.since)) &&
         (filter.until < 0 || micros <= bound(filter.until));
}

// Leaves the records `filter` names (those of unknown events go too).
void filter_records(trace::TraceFileContents& file, const ReportFilter& filter) {
  std::erase_if(file.records, [&](const trace::FileRecord& record) {
    const auto header = trace::load_field<trace::RecordHeader>(record.bytes.data(), 0);
    const auto event = file.events.find({record.stream, header.type});
    if (event == file.events.end()) return false;  // counted as unknown later
    return !event_wanted(filter.events, event->second) || !any_or_in(filter.pids, header.pid) ||
           !any_or_in(filter.tids, header.tid) || !time_wanted(filter, header.timestamp);
  });
}

// The timeline to `path`; false after saying why it could not be written.
bool write_perfetto(const trace::TraceFileContents& file, const std::string& path,
                    std::ostream& errors) {
  const std::string json = perfetto_json(file);
  std::FILE* out = std::fopen(path.c_str(), "we");
  bool ok = out != nullptr && std::fwrite(json.data(), 1, json.size(), out) == json.size();
  if (out != nullptr && std::fclose(out) != 0) ok = false;
  if (!ok) errors << "dprobe: error: " << printable(path) << ": " << std::strerror(errno) << "\n";
  return ok;
}

}  // namespace

int run_report(const ReportOptions& options, std::FILE* out, std::ostream& errors) {
  std::ifstream in(options.file, std::ios::binary);
  if (!in) {
    errors << "dprobe: error: " << printable(options.file) << ": " << std::strerror(errno) << "\n";
    return kExitFailure;
  }
  const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  trace::TraceFileContents file = trace::read_trace_file(data);
  filter_records(file, options.filter);
  std::string text;
  uint64_t unknown = 0;
  if (!options.perfetto.empty()) {
    if (!write_perfetto(file, options.perfetto, errors)) return kExitFailure;
  } else if (options.profile) {
    text = file.profile;
  } else {
    unknown = format_records(file, options.json, text);
  }
  std::fflush(out);
  if (!write_whole_lines(::fileno(out), text) && errno != EPIPE) {
    errors << "dprobe: error: writing the report: " << std::strerror(errno) << "\n";
    return kExitFailure;
  }
  if (unknown > 0) {
    errors << "dprobe: warning: " << unknown << " records of events the file does not describe\n";
  }
  errors << file.notes;  // what the session said at its end
  if (file.error) {
    errors << "dprobe: error: " << printable(options.file) << ": at offset " << file.error->first
           << ": " << file.error->second << " (everything before it was reported)\n";
    return kExitFailure;
  }
  if (options.profile && file.profile.empty()) {
    errors << "dprobe: warning: " << printable(options.file)
           << ": no profile (the recording did not end)\n";
  }
  return 0;
}

}  // namespace dprobe::cli
