// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the integration tests share: running the built dprobe (or any
// program) as a user would, each output in a file of its own, and reading
// what it printed back as fields.
//
//   const RunResult run = run_dprobe({"run", "-e", "p:g/e add a=%di", "--", program("args_O0")});
//   EXPECT_EQ(run.status, 0) << run.err;
//   for (const TraceLine& line : parse_trace(run.out)) { ... line.arg("a") ... }
//   const std::vector<ProfileRow> rows = parse_profile(run.err);  // the profile is on stderr
//
// Traces are compared on comm, tid, event, location and args: never on the
// timestamp or the cpu, which change from run to run.
#ifndef DPROBE_TESTS_INTEGRATION_DPROBE_RUN_H_
#define DPROBE_TESTS_INTEGRATION_DPROBE_RUN_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "support/child_process.h"
#include "support/patience.h"

extern char** environ;

namespace dprobe::integration {

// ---- Files and directories ----------------------------------------------------

using support::patience;
using support::read_file;

inline void write_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

using support::TempDir;

// A test program built by tests/programs (NAME_O0, NAME_O2).
inline std::string program(std::string_view name) {
  return std::string(DPROBE_PROGRAMS_DIR) + "/" + std::string(name);
}

// ---- Running ------------------------------------------------------------------

// Whether the suite runs with breakpoints only: DPROBE_TEST_BREAKPOINTS set
// (and not "0"), as ctest's integration_bp.* tests do (tests/CMakeLists.txt).
// The same tests then check the engine every optimized probe falls back to.
inline bool breakpoints_only() {
  const char* value = std::getenv("DPROBE_TEST_BREAKPOINTS");
  return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

// A definition written with x86_64's register names, in the host ISA's:
// on arm64 the AAPCS64 registers in the same roles (the integer arguments
// di, si, dx, cx, r8, r9 are x0..x5, the return value ax is x0, bp the
// frame pointer x29, ip the pc). The tests that name no other register
// run on both (tests/CMakeLists.txt lists those built for arm64).
inline std::string in_host_registers(std::string definition) {
#if defined(__aarch64__)
  static constexpr std::pair<std::string_view, std::string_view> kRoles[] = {
      {"%di", "%x0"}, {"%si", "%x1"}, {"%dx", "%x2"},  {"%cx", "%x3"}, {"%r8", "%x4"},
      {"%r9", "%x5"}, {"%ax", "%x0"}, {"%bp", "%x29"}, {"%ip", "%pc"}};
  for (const auto& [x86, arm64] : kRoles) {
    for (size_t at = definition.find(x86); at != std::string::npos;
         at = definition.find(x86, at + arm64.size())) {
      const size_t end = at + x86.size();
      if (end < definition.size() && std::isalnum(static_cast<unsigned char>(definition[end]))) {
        continue;  // %r8d, %r9w: not the register named
      }
      definition.replace(at, x86.size(), arm64);
    }
  }
#endif
  return definition;
}

// `args` as run: each definition after -e in the host's registers, and
// --no-optimize after every `dprobe run` and `dprobe attach` when
// breakpoints_only(): dprobe may come after a wrapper (env, prlimit), so
// it is looked for by path. A test that names the option itself keeps it
// once.
inline std::vector<std::string> with_probe_engine(std::vector<std::string> args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i - 1] == "-e") args[i] = in_host_registers(args[i]);
  }
  if (!breakpoints_only()) return args;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] != DPROBE_BINARY ||
        (args[i + 1] != "run" && args[i + 1] != "attach" && args[i + 1] != "record"))
      continue;
    const auto end = std::find(args.begin() + static_cast<ptrdiff_t>(i), args.end(), "--");
    if (std::find(args.begin() + static_cast<ptrdiff_t>(i), end, "--no-optimize") == end) {
      args.insert(args.begin() + static_cast<ptrdiff_t>(i) + 2, "--no-optimize");
    }
    break;
  }
  return args;
}

// How a run went and what it wrote (support/child_process.h); printed with
// the head and the tail of its stderr.
using RunResult = support::CapturedRun;

// How long a program run to its end may take before it is called a hang:
// six patience()s, a minute on an idle machine (support/patience.h).
inline std::chrono::milliseconds run_time_limit() { return patience(6); }

// Whether `dprobe run -o FILE` is recorded and reported instead:
// DPROBE_TEST_ROUND_TRIP set (and not "0"), as ctest's integration_rt.*
// tests do. The same tests then check that `dprobe report` prints what
// `run` would have.
inline bool round_trip() {
  const char* value = std::getenv("DPROBE_TEST_ROUND_TRIP");
  return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

// `dprobe run ... [-o FILE]` (FILE a regular file) as `dprobe record ... -o
// RECORDING`: the report command, with --json if the run had it, and last
// the FILE to print it to ("" for the run's stdout, after the program's
// output). Empty when `args` is not such a run.
inline std::vector<std::string> as_recording(std::vector<std::string>& args,
                                             const std::string& recording) {
  if (!round_trip()) return {};
  const auto at = [&](const std::string& what, size_t from, size_t to) {
    return static_cast<size_t>(std::find(args.begin() + static_cast<ptrdiff_t>(from),
                                         args.begin() + static_cast<ptrdiff_t>(to), what) -
                               args.begin());
  };
  const size_t dprobe = at(DPROBE_BINARY, 0, args.size());
  if (dprobe + 1 >= args.size() || args[dprobe + 1] != "run") return {};
  size_t end = at("--", dprobe, args.size());
  size_t out = at("-o", dprobe, end);
  if (out == end) {
    args.insert(args.begin() + static_cast<ptrdiff_t>(dprobe) + 2, {"-o", ""});
    out = dprobe + 2;
    end += 2;
  } else if (out + 1 >= end || args[out + 1].rfind("/dev/", 0) == 0) {
    return {};
  }
  const std::string text = args[out + 1];
  // There while the program runs, as run's would be; one that cannot be
  // written is run's to report.
  if (!text.empty()) {
    const int fd = ::open(text.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return {};
    ::close(fd);
  }
  std::vector<std::string> report{DPROBE_BINARY, "report", recording};
  args[dprobe + 1] = "record";
  args[out + 1] = recording;
  if (const size_t json = at("--json", dprobe, end); json != end) {
    report.push_back("--json");
    args.erase(args.begin() + static_cast<ptrdiff_t>(json));
  }
  report.push_back(text);
  return report;
}

inline RunResult run_spawned(const std::vector<std::string>& args, std::chrono::milliseconds limit,
                             const std::string& stdout_path = {});

inline RunResult run_program(const std::vector<std::string>& args,
                             std::chrono::milliseconds limit = run_time_limit()) {
  std::vector<std::string> storage = with_probe_engine(args);
  TempDir recordings;
  std::vector<std::string> report = as_recording(storage, recordings.file("trace.dat"));
  RunResult run = run_spawned(storage, limit);
  if (report.empty()) return run;
  const std::string text = report.back();
  report.pop_back();
  const RunResult reported = run_spawned(report, limit, text);
  if (text.empty()) run.out += reported.out;
  // A file cut short still reports its prefix; the run's status stands. Its
  // stderr repeats the recording's closing words: said only if it failed.
  if (reported.status != 0) run.err += "round trip: dprobe report: " + reported.err;
  return run;
}

// `args` run to its end (support::run_captured: killed after `limit`, which
// only ends a hang), stdout to `stdout_path` when given.
inline RunResult run_spawned(const std::vector<std::string>& args, std::chrono::milliseconds limit,
                             const std::string& stdout_path) {
  // The suite's own switches are not the program's business.
  std::vector<char*> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::string_view(*entry).rfind("DPROBE_TEST_", 0) != 0) env.push_back(*entry);
  }
  env.push_back(nullptr);
  return support::run_captured(args, limit, stdout_path, env.data());
}

// Runs the built dprobe with `args`.
inline RunResult run_dprobe(const std::vector<std::string>& args,
                            std::chrono::milliseconds limit = run_time_limit()) {
  std::vector<std::string> argv{DPROBE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, limit);
}

// `dprobe run -e DEF... -- COMMAND...`, with `options` before the --.
inline RunResult run_traced(const std::vector<std::string>& definitions,
                            const std::vector<std::string>& command,
                            const std::vector<std::string>& options = {}) {
  std::vector<std::string> args{"run"};
  for (const std::string& definition : definitions) {
    args.push_back("-e");
    args.push_back(definition);
  }
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return run_dprobe(args);
}

// ---- Trace lines ----------------------------------------------------------------

struct TraceArg {
  std::string name;
  std::string value;  // the raw text: 0x2a, -5, "text", 'c', {1,2}, (fault)
  bool operator==(const TraceArg&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const TraceArg& arg) {
  return os << arg.name << "=" << arg.value;
}

struct TraceLine {
  std::string comm;
  uint64_t tid = 0;
  uint32_t cpu = 0;
  std::string timestamp;  // "sec.usec", as printed
  std::string event;
  std::string location;  // inside the parentheses: "sym+0x0/0x4"
  std::vector<TraceArg> args;

  // The value of the argument `name`, or "<none>".
  std::string arg(std::string_view name) const {
    for (const TraceArg& a : args) {
      if (a.name == name) return a.value;
    }
    return "<none>";
  }
  // What two runs of the same trace agree on.
  bool same_event(const TraceLine& other) const {
    return comm == other.comm && tid == other.tid && event == other.event &&
           location == other.location && args == other.args;
  }
};

inline std::ostream& operator<<(std::ostream& os, const TraceLine& line) {
  os << line.comm << "-" << line.tid << " " << line.event << ": (" << line.location << ")";
  for (const TraceArg& arg : line.args) os << " " << arg;
  return os;
}

namespace detail {

inline bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

inline uint64_t to_number(std::string_view digits) {
  uint64_t value = 0;
  for (char c : digits) value = value * 10 + static_cast<uint64_t>(c - '0');
  return value;
}

inline std::string_view trim_left(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  return text;
}

inline std::string_view trim_right(std::string_view text) {
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// The length of one value at the start of `text`: a quoted string up to
// the closing quote that ends the value, a {...} array, a 'c' char, or a
// word up to the next space.
inline size_t value_length(std::string_view text) {
  if (text.empty()) return 0;
  if (text.front() == '"') {
    for (size_t i = 1; i < text.size(); ++i) {
      if (text[i] == '"' && (i + 1 == text.size() || text[i + 1] == ' ')) return i + 1;
    }
    return text.size();
  }
  if (text.front() == '{') {
    bool quoted = false;
    for (size_t i = 1; i < text.size(); ++i) {
      if (text[i] == '"') quoted = !quoted;
      if (!quoted && text[i] == '}') return i + 1;
    }
    return text.size();
  }
  if (text.front() == '\'' && text.size() >= 3 && text[2] == '\'') return 3;
  const size_t space = text.find(' ');
  return space == std::string_view::npos ? text.size() : space;
}

// The head every trace line has, "%16s-%-7d [%03d] %5s %5lu.%06lu: ", and
// the text after it.
struct LineHead {
  std::string comm;
  uint64_t tid = 0;
  uint32_t cpu = 0;
  std::string timestamp;  // "sec.usec", as printed
  std::string_view rest;
};

inline std::optional<LineHead> parse_line_head(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  LineHead line;
  // " [cpu] ": the first bracket group after the comm and the tid.
  size_t open = text.find(" [");
  while (open != std::string_view::npos) {
    const size_t close = text.find("] ", open);
    if (close != std::string_view::npos && all_digits(text.substr(open + 2, close - open - 2)))
      break;
    open = text.find(" [", open + 1);
  }
  if (open == std::string_view::npos) return std::nullopt;
  const std::string_view head = trim_right(text.substr(0, open));
  const size_t dash = head.rfind('-');
  if (dash == std::string_view::npos || !all_digits(head.substr(dash + 1))) return std::nullopt;
  line.tid = to_number(head.substr(dash + 1));
  line.comm = std::string(trim_left(head.substr(0, dash)));
  const size_t close = text.find("] ", open);
  line.cpu = static_cast<uint32_t>(to_number(text.substr(open + 2, close - open - 2)));
  std::string_view rest = text.substr(close + 2);
  const size_t flags_end = rest.find(' ');  // the flags column, "....."
  if (flags_end == std::string_view::npos) return std::nullopt;
  rest = trim_left(rest.substr(flags_end));
  const size_t ts_end = rest.find(": ");
  if (ts_end == std::string_view::npos) return std::nullopt;
  line.timestamp = std::string(rest.substr(0, ts_end));
  const size_t point = line.timestamp.find('.');
  if (point == std::string::npos || !all_digits(line.timestamp.substr(0, point)) ||
      !all_digits(line.timestamp.substr(point + 1))) {
    return std::nullopt;
  }
  line.rest = rest.substr(ts_end + 2);
  return line;
}

}  // namespace detail

// One line of the kernel's trace format:
//   "%16s-%-7d [%03d] %5s %5lu.%06lu: %s: (%s) name=value..."
inline std::optional<TraceLine> parse_trace_line(std::string_view text) {
  using namespace detail;
  std::optional<LineHead> head = parse_line_head(text);
  if (!head) return std::nullopt;
  TraceLine line;
  line.comm = std::move(head->comm);
  line.tid = head->tid;
  line.cpu = head->cpu;
  line.timestamp = std::move(head->timestamp);
  std::string_view rest = head->rest;
  const size_t event_end = rest.find(": (");
  if (event_end == std::string_view::npos) return std::nullopt;
  line.event = std::string(rest.substr(0, event_end));
  rest = rest.substr(event_end + 3);
  // The ')' that closes the location: C++ names hold balanced ones.
  size_t location_end = std::string_view::npos;
  for (size_t i = 0, depth = 0; i < rest.size() && location_end == std::string_view::npos; ++i) {
    if (rest[i] == '(') ++depth;
    if (rest[i] == ')' && depth-- == 0) location_end = i;
  }
  if (location_end == std::string_view::npos) return std::nullopt;
  line.location = std::string(rest.substr(0, location_end));
  rest = rest.substr(location_end + 1);
  while (!rest.empty()) {
    if (rest.front() != ' ') return std::nullopt;
    rest.remove_prefix(1);
    const size_t equals = rest.find('=');
    if (equals == std::string_view::npos || equals == 0) return std::nullopt;
    TraceArg arg;
    arg.name = std::string(rest.substr(0, equals));
    rest.remove_prefix(equals + 1);
    const size_t length = value_length(rest);
    arg.value = std::string(rest.substr(0, length));
    rest.remove_prefix(length);
    line.args.push_back(std::move(arg));
  }
  return line;
}

// Every line of `text` that is a trace line; other lines (the traced
// program's own output, the profile) are skipped.
inline std::vector<TraceLine> parse_trace(std::string_view text) {
  std::vector<TraceLine> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (auto parsed = parse_trace_line(line)) lines.push_back(std::move(*parsed));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The lines of one event.
inline std::vector<TraceLine> lines_of(const std::vector<TraceLine>& lines,
                                       std::string_view event) {
  std::vector<TraceLine> out;
  for (const TraceLine& line : lines) {
    if (line.event == event) out.push_back(line);
  }
  return out;
}

// ---- The profile ----------------------------------------------------------------

struct ProfileRow {
  std::string event;
  uint64_t hits = 0;
  uint64_t misses = 0;
};

// Lines of the kprobe_profile shape: "  %-44s %15lu %15lu".
inline std::vector<ProfileRow> parse_profile(std::string_view text) {
  using namespace detail;
  std::vector<ProfileRow> rows;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (!line.starts_with("  ") || line.size() < 2 + 44 + 1 + 15 + 1 + 15) continue;
    line.remove_prefix(2);
    const size_t name_end = line.find(' ');
    if (name_end == 0 || name_end == std::string_view::npos) continue;
    ProfileRow row;
    row.event = std::string(line.substr(0, name_end));
    const std::string_view numbers = trim_left(line.substr(name_end));
    const size_t gap = numbers.find(' ');
    if (gap == std::string_view::npos) continue;
    const std::string_view hits = numbers.substr(0, gap);
    const std::string_view misses = trim_left(numbers.substr(gap));
    if (!all_digits(hits) || !all_digits(misses)) continue;
    row.hits = to_number(hits);
    row.misses = to_number(misses);
    rows.push_back(std::move(row));
  }
  return rows;
}

// The events dprobe reported lost ("dprobe: N events lost: ..." lines, for
// a full ring and for no ring at all), every event's together.
inline uint64_t lost_events(std::string_view text) {
  constexpr std::string_view kPrefix = "dprobe: ";
  constexpr std::string_view kLost = " events lost";
  uint64_t lost = 0;
  for (size_t at = text.find(kLost); at != std::string_view::npos; at = text.find(kLost, at + 1)) {
    const size_t line = text.rfind('\n', at);
    const size_t begin = (line == std::string_view::npos ? 0 : line + 1) + kPrefix.size();
    if (begin < at && detail::all_digits(text.substr(begin, at - begin))) {
      lost += detail::to_number(text.substr(begin, at - begin));
    }
  }
  return lost;
}

// The row of `event`, if the profile has one.
inline std::optional<ProfileRow> profile_row(const std::vector<ProfileRow>& rows,
                                             std::string_view event) {
  for (const ProfileRow& row : rows) {
    if (row.event == event) return row;
  }
  return std::nullopt;
}

}  // namespace dprobe::integration

#endif  // DPROBE_TESTS_INTEGRATION_DPROBE_RUN_H_
