// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/command/report_command.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>

#include "base/result.h"
#include "cli/output/function_graph.h"
#include "cli/output/function_table.h"
#include "cli/output/line_writer.h"
#include "cli/output/perfetto.h"
#include "cli/output/strace_format.h"
#include "cli/output/terminal_text.h"
#include "cli/session/trace_loop.h"
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

// The notes as the session wrote them, one line each, but with every
// control character of a line shown as \xNN: they come from the file, which
// anyone can craft, and go to a terminal.
std::string printable_notes(std::string_view notes) {
  std::string out;
  while (!notes.empty()) {
    const size_t newline = notes.find('\n');
    out += printable(notes.substr(0, newline));
    out += '\n';
    notes.remove_prefix(newline == std::string_view::npos ? notes.size() : newline + 1);
  }
  return out;
}

// A FIFO: its first byte, if a writer is there; with none yet, waits until
// one writes or closes, after saying so. `perf report` and `cat` read a FIFO
// whenever a writer comes (`perf record -o - | perf report -i -`,
// `<(zcat FILE)`), so refusing one would surprise; but waiting without a
// word looks like a hang. Empty, or why the FIFO cannot be read.
std::string start_fifo(int fd, const std::string& path, std::string& data, std::ostream& errors) {
  char first = 0;
  const ssize_t got = ::read(fd, &first, 1);  // O_NONBLOCK: 0 means no writer
  if (got == 1) data.push_back(first);
  if (got != 0) return got < 0 && errno != EAGAIN ? std::strerror(errno) : std::string();
  errors << "dprobe: " << printable(path) << " is a FIFO: waiting for a writer\n" << std::flush;
  // Non-blocking, it reports nothing until a writer writes or closes.
  pollfd wanted{fd, POLLIN, 0};
  while (::poll(&wanted, 1, -1) < 0) {
    if (errno != EINTR) return std::strerror(errno);
  }
  return {};
}

// Blocking again, so that reading waits for the writer's data.
std::string make_blocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) return std::strerror(errno);
  return {};
}

// Reads all of `fd`; empty, or why not.
std::string read_all(int fd, std::string& data) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) return {};
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::strerror(errno);
    data.append(buffer, static_cast<size_t>(got));
  }
}

// The whole file into `data`; false after saying why not. Opened without
// blocking (an open of a FIFO waits for a writer, silently); a directory is
// refused here, not met as a read error.
bool read_trace_bytes(const std::string& path, std::string& data, std::ostream& errors) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  std::string why;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    why = std::strerror(EISDIR);
  } else if (S_ISFIFO(st.st_mode)) {
    why = start_fifo(fd, path, data, errors);
  }
  if (why.empty()) why = make_blocking(fd);
  if (why.empty()) why = read_all(fd, data);
  if (fd >= 0) ::close(fd);
  if (!why.empty()) errors << "dprobe: error: " << printable(path) << ": " << why << "\n";
  return why.empty();
}

// --format and the strace options: nullopt for ftrace's lines, or an
// error naming the bad option.
Result<std::optional<StraceOptions>> strace_report_options(const ReportOptions& options) {
  const bool strace_only =
      !options.string_limit.empty() || options.syscall_times || !options.timestamps.empty();
  if (options.format == "ftrace") {
    if (strace_only) {
      return fail("--string-limit, --syscall-times and --timestamps go with --format strace");
    }
    return std::optional<StraceOptions>();
  }
  if (options.format != "strace") {
    return fail("bad --format: " + printable(options.format) +
                " (ftrace, the kernel's trace lines, or strace)");
  }
  StraceOptions strace;
  strace.durations = options.syscall_times;
  if (!options.string_limit.empty()) {
    const auto limit = parse_count(options.string_limit, strace::kMaxStringLimit);
    if (!limit) return fail("bad --string-limit: " + printable(options.string_limit));
    strace.string_limit = *limit;
  }
  if (!options.timestamps.empty()) {
    const auto timestamps = parse_strace_timestamps(options.timestamps);
    if (timestamps != StraceTimestamps::kRelative) {
      return fail("bad --timestamps: " + printable(options.timestamps) +
                  " (report takes r only: a recording keeps no wall clock for t, tt, ttt)");
    }
    strace.timestamps = *timestamps;
  }
  return std::optional<StraceOptions>(strace);
}

}  // namespace

int run_report(const ReportOptions& options, std::FILE* out, std::ostream& errors) {
  const auto strace = strace_report_options(options);
  if (!strace) {
    errors << "dprobe: error: " << strace.error().message << "\n";
    return 2;
  }
  std::string data;
  if (!read_trace_bytes(options.file, data, errors)) return kExitFailure;
  trace::TraceFileContents file = trace::read_trace_file(data);
  filter_records(file, options.filter);
  std::string text;
  uint64_t unknown = 0;
  if (!options.perfetto.empty()) {
    if (!write_perfetto(file, options.perfetto, errors)) return kExitFailure;
  } else if (options.profile) {
    text = file.profile;
  } else if (options.graph) {
    text = function_graph(file);
  } else if (options.functions) {
    text = function_table(file);
  } else if (*strace) {
    text = strace_text(file, **strace);
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
  errors << printable_notes(file.notes);  // what the session said at its end
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

Subcommand add_report_command(CLI::App& app) {
  auto report = std::make_shared<ReportOptions>();
  CLI::App* command =
      app.add_subcommand("report", "Print a trace file that record wrote, as run prints a trace");
  command->add_option("file", report->file, "The trace file (default: dprobe.dat)");
  CLI::Option* json =
      command->add_flag("--json", report->json, "Print JSON lines instead of ftrace text lines");
  CLI::Option* profile =
      command->add_flag("--profile", report->profile,
                        "Print the profile (each event's hits and misses) instead of the trace");
  CLI::Option* perfetto =
      command->add_option("--perfetto", report->perfetto,
                          "Write the trace as Chrome trace-event JSON for Perfetto (return probes "
                          "as slices) to this file, instead of printing it");
  CLI::Option* graph = command->add_flag(
      "--graph", report->graph,
      "Print the calls as the kernel's function_graph tracer does, thread by thread: needs "
      "entry (p) and return (r) probes on the same functions (run --graph-functions sets both)");
  command
      ->add_flag("--functions", report->functions,
                 "Print a table of the calls per function instead: total, self, average and "
                 "longest time, as uftrace's report")
      ->excludes(json, profile, perfetto, graph);
  graph->excludes(json, profile, perfetto);
  command
      ->add_option("--format", report->format,
                   "ftrace: the kernel's trace lines (the default); strace: the system calls as "
                   "strace prints them (a recording of record --format strace, or of the "
                   "syscalls:sys_enter_* and sys_exit_* events)")
      ->excludes(json, profile, perfetto, graph);
  command->add_option("--string-limit", report->string_limit,
                      "--format strace: print at most N bytes of a string (strace's -s)");
  command->add_flag("--syscall-times", report->syscall_times,
                    "--format strace: each call's time from entry to return (strace's -T)");
  command->add_option("--timestamps", report->timestamps,
                      "--format strace: r, the time since the previous line (strace's -r)");
  // One value per occurrence: "--pid 5 FILE" leaves FILE alone.
  command
      ->add_option("--event", report->filter.events, "Only the records of [GRP/]EVENT (repeatable)")
      ->allow_extra_args(false);
  command->add_option("--pid", report->filter.pids, "Only the records of this process (repeatable)")
      ->allow_extra_args(false);
  command->add_option("--tid", report->filter.tids, "Only the records of this thread (repeatable)")
      ->allow_extra_args(false);
  command
      ->add_option("--since", report->filter.since,
                   "Only the records at or after this time (seconds, as the lines print it)")
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--until", report->filter.until,
                   "Only the records at or before this time (seconds, as the lines print it)")
      ->check(CLI::NonNegativeNumber);
  return {command, [report] { return run_report(*report, stdout, std::cerr); }};
}

}  // namespace dprobe::cli
