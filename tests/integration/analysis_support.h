// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the tests of --filter, --trigger, --stacktrace and $duration share
// (analysis_*_test.cc): what tests/programs/analysis.c does, so that every
// expected count is computed rather than copied, and readers of what those
// options print: the profile with its third column, the kernel's hist
// layout, ftrace's user stack block.
//
//   for (const Hist& hist : parse_hists(run.out)) ... hist.entries[0].key("size") ...
//   for (const StackedLine& line : parse_stacked(run.out)) ... line.stack[1].function ...
//   const std::optional<FilteredRow> row = filtered_row(run.err, "take");
#ifndef DPROBE_TESTS_INTEGRATION_ANALYSIS_SUPPORT_H_
#define DPROBE_TESTS_INTEGRATION_ANALYSIS_SUPPORT_H_

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"

namespace dprobe::integration::analysis {

// ---- The program -------------------------------------------------------------------

// Each thread calls take(size, tag) for size = 1..kSizes, `size % 7 + 1`
// times, tag "alpha" when the size is even, "beta" otherwise; then
// level3 -> level2 -> level1 -> leaf three times. Main then naps 10, 10
// and 40 ms.
constexpr uint64_t kSizes = 300;
inline uint64_t calls_of(uint64_t size) { return size % 7 + 1; }
inline std::string tag_of(uint64_t size) { return size % 2 == 0 ? "alpha" : "beta"; }
constexpr uint64_t kLeafCallsPerThread = 3;
constexpr uint64_t kNaps[] = {10, 10, 40};  // ms

// The calls of take one thread makes, in order.
struct TakeCall {
  uint64_t size;
  std::string tag;
};
inline std::vector<TakeCall> take_calls() {
  std::vector<TakeCall> calls;
  for (uint64_t size = 1; size <= kSizes; ++size) {
    for (uint64_t i = 0; i < calls_of(size); ++i) calls.push_back({size, tag_of(size)});
  }
  return calls;
}
inline uint64_t take_calls_per_thread() { return take_calls().size(); }

// The program built at `level` ("O0", "O2"), its file name (the object of
// its symbols in a probe and in a stack frame), its take probe.
inline std::string analysis_name(std::string_view level) {
  return "analysis_" + std::string(level);
}
inline std::string analysis_path(std::string_view level) { return program(analysis_name(level)); }
inline std::string take_probe(std::string_view level = "O2") {
  return "p:a/take " + analysis_name(level) + ":take size=%di:u64 tag=+0(%si):string";
}

// The program ran to its end and said so (it prints this last).
inline bool program_finished(const RunResult& run) {
  return run.out.find("analysis: ok\n") != std::string::npos;
}

// ---- The profile with its third column -----------------------------------------------

struct FilteredRow {
  std::string event;
  uint64_t hits = 0;
  uint64_t misses = 0;
  std::optional<uint64_t> filtered;  // the third column, when printed
};

// The row of `event` in the profile ("  %-44s %15lu %15lu[ %15lu]").
inline std::optional<FilteredRow> filtered_row(std::string_view text, std::string_view event) {
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("  ")) continue;
    std::istringstream words(line);
    std::string name;
    words >> name;
    if (name != event) continue;
    std::vector<std::string> numbers;
    for (std::string word; words >> word;) numbers.push_back(word);
    if (numbers.size() < 2 || numbers.size() > 3) continue;
    bool digits = true;
    for (const std::string& number : numbers) digits = digits && detail::all_digits(number);
    if (!digits) continue;
    FilteredRow row{name, detail::to_number(numbers[0]), detail::to_number(numbers[1]), {}};
    if (numbers.size() == 3) row.filtered = detail::to_number(numbers[2]);
    return row;
  }
  return std::nullopt;
}

// ---- The kernel's hist layout ----------------------------------------------------------

struct HistEntry {
  // The key's fields in order, each value trimmed: "alpha", "~ 2^8",
  // "~ 0-49", "analysis_O2     [     123]"; a stacktrace's frames one a
  // line ("leaf+0x0/0xb [analysis_O2]\nlevel1+...").
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::string, uint64_t> values;  // "hitcount" and every vals= field

  std::string key(std::string_view name) const {
    for (const auto& [field, value] : keys) {
      if (field == name) return value;
    }
    return "<none>";
  }
  uint64_t hitcount() const {
    const auto it = values.find("hitcount");
    return it == values.end() ? 0 : it->second;
  }
};

inline std::ostream& operator<<(std::ostream& os, const HistEntry& entry) {
  os << "{";
  for (const auto& [field, value] : entry.keys) os << " " << field << ": " << value << ";";
  os << " }";
  for (const auto& [field, value] : entry.values) os << " " << field << "=" << value;
  return os;
}

struct Hist {
  std::string event;         // "a/take", from "# events/a/take/hist"
  std::string trigger_info;  // what follows "# trigger info: "
  std::vector<HistEntry> entries;
  std::optional<uint64_t> hits, entry_count, dropped;  // the totals block
};

inline std::ostream& operator<<(std::ostream& os, const Hist& hist) {
  os << "hist of " << hist.event << " [" << hist.trigger_info << "]\n";
  for (const HistEntry& entry : hist.entries) os << "  " << entry << "\n";
  return os << "  Hits " << hist.hits.value_or(0) << " Entries " << hist.entry_count.value_or(0)
            << " Dropped " << hist.dropped.value_or(0);
}

namespace hist_detail {

inline std::string trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  return std::string(text);
}

// "tag: alpha      , size: ~ 0-99" (or "common_stacktrace:\n  frame\n  ...").
inline std::vector<std::pair<std::string, std::string>> parse_keys(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> keys;
  if (text.starts_with("common_stacktrace:") || text.starts_with("stacktrace:")) {
    const size_t colon = text.find(':');
    std::string frames;
    std::istringstream lines{std::string(text.substr(colon + 1))};
    for (std::string line; std::getline(lines, line);) {
      const std::string frame = trim(line);
      if (frame.empty()) continue;
      if (!frames.empty()) frames += "\n";
      frames += frame;
    }
    keys.emplace_back(std::string(text.substr(0, colon)), frames);
    return keys;
  }
  // Fields are ", "-separated; a field's name has no blank and ends at ": ".
  size_t start = 0;
  while (start < text.size()) {
    const size_t colon = text.find(": ", start);
    if (colon == std::string_view::npos) break;
    size_t next = text.find(", ", colon);
    while (next != std::string_view::npos) {
      const size_t after = next + 2;
      const size_t name_end = text.find(": ", after);
      if (name_end != std::string_view::npos &&
          text.substr(after, name_end - after).find(' ') == std::string_view::npos) {
        break;
      }
      next = text.find(", ", after);
    }
    const size_t end = next == std::string_view::npos ? text.size() : next;
    keys.emplace_back(trim(text.substr(start, colon - start)),
                      trim(text.substr(colon + 2, end - colon - 2)));
    start = end + 2;
  }
  return keys;
}

// " hitcount:        392  size:      19404"
inline std::map<std::string, uint64_t> parse_values(std::string_view text) {
  std::map<std::string, uint64_t> values;
  std::istringstream words{std::string(text)};
  for (std::string name, number; words >> name >> number;) {
    if (name.ends_with(':')) name.pop_back();
    values[name] = std::strtoull(number.c_str(), nullptr, 10);
  }
  return values;
}

inline std::optional<uint64_t> total(std::string_view line, std::string_view label) {
  const std::string trimmed = trim(line);
  if (!trimmed.starts_with(label)) return std::nullopt;
  return std::strtoull(trimmed.c_str() + label.size(), nullptr, 10);
}

}  // namespace hist_detail

// Every hist in `text`, each from its "# events/GRP/EVENT/hist" line to
// its Dropped: line; other lines (trace lines, the program's) are skipped.
inline std::vector<Hist> parse_hists(std::string_view text) {
  using namespace hist_detail;
  std::vector<Hist> hists;
  std::istringstream lines{std::string(text)};
  std::string line;
  std::optional<Hist> hist;
  std::string key;  // an entry's text from "{ " on, across lines
  bool in_key = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("# events/") && line.ends_with("/hist")) {
      if (hist) hists.push_back(std::move(*hist));
      hist = Hist{};
      hist->event = line.substr(9, line.size() - 9 - 5);
      continue;
    }
    if (!hist) continue;
    if (line.starts_with("# trigger info: ")) {
      hist->trigger_info = line.substr(16);
    } else if (line.starts_with("{ ")) {
      key = line.substr(2);
      in_key = true;
    } else if (in_key) {
      key += "\n" + line;
    }
    if (in_key) {
      const size_t close = key.rfind("} hitcount:");
      if (close == std::string::npos) continue;
      HistEntry entry;
      entry.keys = parse_keys(key.substr(0, close));
      entry.values = parse_values(key.substr(close + 1));
      hist->entries.push_back(std::move(entry));
      in_key = false;
      continue;
    }
    if (auto n = total(line, "Hits:")) hist->hits = n;
    if (auto n = total(line, "Entries:")) hist->entry_count = n;
    if (auto n = total(line, "Dropped:")) {
      hist->dropped = n;
      hists.push_back(std::move(*hist));
      hist.reset();
    }
  }
  if (hist) hists.push_back(std::move(*hist));
  return hists;
}

// The hitcount of every entry, by its one key's value.
inline std::map<std::string, uint64_t> hitcounts_by_key(const Hist& hist) {
  std::map<std::string, uint64_t> counts;
  for (const HistEntry& entry : hist.entries) {
    if (entry.keys.size() == 1) counts[entry.keys[0].second] += entry.hitcount();
  }
  return counts;
}

// The kernel's .log2 key: ilog2(roundup_pow_of_two(value)), printed "~ 2^N".
inline std::string log2_key(uint64_t value) {
  uint64_t bits = 0;
  while ((uint64_t{1} << bits) < value) ++bits;
  return "~ 2^" + std::to_string(bits);
}

// ---- ftrace's user stack block --------------------------------------------------------

struct StackFrame {
  std::string function;  // "level1", "" when printed as an address
  uint64_t offset = 0;   // into the function
  uint64_t address = 0;  // when printed as an address
  std::string object;    // "analysis_O2", "libc.so.6"
  std::string text;      // as printed, after " => "
};

inline std::ostream& operator<<(std::ostream& os, const StackFrame& frame) {
  return os << frame.text;
}

// " => level1+0x9/0x13 (analysis_O2)" or " => 0x7f4a0b1ca1f5 (libc.so.6)".
inline std::optional<StackFrame> parse_stack_frame(std::string_view line) {
  if (!line.starts_with(" => ")) return std::nullopt;
  line.remove_prefix(4);
  StackFrame frame;
  frame.text = std::string(line);
  const size_t open = line.rfind(" (");
  if (open == std::string_view::npos || !line.ends_with(")")) return std::nullopt;
  frame.object = std::string(line.substr(open + 2, line.size() - open - 3));
  const std::string where(line.substr(0, open));
  if (where.starts_with("0x")) {
    frame.address = std::strtoull(where.c_str(), nullptr, 16);
    return frame;
  }
  const size_t plus = where.rfind('+');
  if (plus == std::string::npos) return std::nullopt;
  frame.function = where.substr(0, plus);
  frame.offset = std::strtoull(where.c_str() + plus + 1, nullptr, 16);
  return frame;
}

// A trace line and the user stack printed under it (empty if none).
struct StackedLine {
  TraceLine line;
  std::vector<StackFrame> stack;
  bool has_stack_header = false;  // its "<user stack trace>" line
};

// Every trace line of `text` with the stack block that follows it.
inline std::vector<StackedLine> parse_stacked(std::string_view text) {
  std::vector<StackedLine> lines;
  std::istringstream stream{std::string(text)};
  for (std::string line; std::getline(stream, line);) {
    if (auto parsed = parse_trace_line(line)) {
      lines.push_back({std::move(*parsed), {}, false});
      continue;
    }
    if (lines.empty()) continue;
    if (auto head = detail::parse_line_head(line);
        head && head->rest == "<user stack trace>" && head->tid == lines.back().line.tid) {
      lines.back().has_stack_header = true;
    } else if (auto frame = parse_stack_frame(line)) {
      lines.back().stack.push_back(std::move(*frame));
    }
  }
  return lines;
}

// "leaf+0x0" for a symbolized frame, "0xADDR" for the others: what a
// stack shows apart from the function's size.
inline std::string frame_name(const StackFrame& frame) {
  if (frame.function.empty()) return hex(frame.address);
  return frame.function + "+" + hex(frame.offset);
}

}  // namespace dprobe::integration::analysis

#endif  // DPROBE_TESTS_INTEGRATION_ANALYSIS_SUPPORT_H_
