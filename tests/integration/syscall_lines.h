// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the system call tests share: the kernel's syscall lines, whose
// text after the timestamp is not the "EVENT: (LOCATION) ARGS" of a probe
// (dprobe_run.h's parse_trace reads those, and the e: event probes' lines):
//   "ls-17401   [000] ..... 28716.670052: sys_openat(dfd: 0xffffff9c, ..., mode: 0)"
//   "ls-17401   [000] ..... 28716.670060: sys_openat -> 0x3"
//   "ls-17401   [000] ..... 28716.670061: sys_enter: NR 33 (b, 1, 55bf25e8d9bc, 0, 7, b)"
//   "ls-17401   [000] ..... 28716.670062: sys_exit: NR 262 = -2"
// The kernel's own trace (tracefs) prints the same, so one parser reads both.
//
//   for (const SyscallLine& line : parse_syscall_trace(run.out))
//     if (line.name() == "openat" && line.is_exit()) ... line.result() ...
//
// Lines are compared on comm, tid and text: never the timestamp or the cpu.
#ifndef DPROBE_TESTS_INTEGRATION_SYSCALL_LINES_H_
#define DPROBE_TESTS_INTEGRATION_SYSCALL_LINES_H_

#include <cstdint>
#include <cstdio>
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

namespace dprobe::integration {

struct SyscallLine {
  std::string comm;
  uint64_t tid = 0;
  std::string text;  // everything after "sec.usec: "

  // raw_syscalls:sys_enter / sys_exit: "sys_enter: NR 33 (...)", "sys_exit: NR 262 = -2".
  bool is_raw() const {
    return text.starts_with("sys_enter: NR ") || text.starts_with("sys_exit: NR ");
  }
  // syscalls:sys_enter_NAME: "sys_NAME(ARGS)".
  bool is_enter() const { return !is_raw() && text.starts_with("sys_") && text.ends_with(")"); }
  // syscalls:sys_exit_NAME: "sys_NAME -> 0xVALUE".
  bool is_exit() const {
    return !is_raw() && text.starts_with("sys_") && text.find(" -> ") != std::string::npos;
  }
  // NAME of a syscalls: line ("openat"); "" for any other line.
  std::string name() const {
    if (!is_enter() && !is_exit()) return {};
    const size_t end = text.find_first_of("( ");
    return text.substr(4, end - 4);
  }
  // What follows " -> " on an exit line ("0x3"); "" on others.
  std::string result() const {
    const size_t arrow = text.find(" -> ");
    return is_exit() ? text.substr(arrow + 4) : std::string();
  }
  // The NR of a raw line; -1 on others.
  long raw_nr() const {
    return is_raw() ? std::strtol(text.c_str() + text.find("NR ") + 3, nullptr, 10) : -1;
  }
  // What follows " = " on a raw exit line ("-2"); "" on others.
  std::string raw_result() const {
    const size_t equals = text.find(" = ");
    return is_raw() && equals != std::string::npos ? text.substr(equals + 3) : std::string();
  }
  // The "name: value" pairs of an enter line, in order.
  std::vector<std::pair<std::string, std::string>> args() const {
    std::vector<std::pair<std::string, std::string>> out;
    if (!is_enter()) return out;
    std::string_view rest(text);
    rest = rest.substr(rest.find('(') + 1);
    rest.remove_suffix(1);
    while (!rest.empty()) {
      const size_t comma = rest.find(", ");
      const std::string_view pair = rest.substr(0, comma);
      const size_t colon = pair.find(": ");
      if (colon == std::string_view::npos) break;
      out.emplace_back(std::string(pair.substr(0, colon)), std::string(pair.substr(colon + 2)));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
    }
    return out;
  }
};

inline std::ostream& operator<<(std::ostream& os, const SyscallLine& line) {
  return os << line.comm << "-" << line.tid << ": " << line.text;
}

// One line of the kernel's trace: "%16s-%-7d [%03d] %5s %5lu.%06lu: TEXT".
inline std::optional<SyscallLine> parse_syscall_line(std::string_view text) {
  std::optional<detail::LineHead> head = detail::parse_line_head(text);
  if (!head) return std::nullopt;
  SyscallLine line;
  line.tid = head->tid;
  line.comm = std::move(head->comm);
  line.text = std::string(head->rest);
  return line;
}

// Every trace line of `text`; other lines (the program's output, the
// kernel's "#" header) are skipped.
inline std::vector<SyscallLine> parse_syscall_trace(std::string_view text) {
  std::vector<SyscallLine> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    if (auto line = parse_syscall_line(text.substr(0, end))) lines.push_back(std::move(*line));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The syscalls: lines (enter and exit) of the system call `name`.
inline std::vector<SyscallLine> syscall_lines_of(const std::vector<SyscallLine>& lines,
                                                 std::string_view name) {
  std::vector<SyscallLine> out;
  for (const SyscallLine& line : lines) {
    if (line.name() == name) out.push_back(line);
  }
  return out;
}

inline std::vector<std::string> texts_of(const std::vector<SyscallLine>& lines) {
  std::vector<std::string> out;
  for (const SyscallLine& line : lines) out.push_back(line.text);
  return out;
}

// How many lines each thread has.
inline std::map<uint64_t, size_t> lines_per_tid(const std::vector<SyscallLine>& lines) {
  std::map<uint64_t, size_t> counts;
  for (const SyscallLine& line : lines) ++counts[line.tid];
  return counts;
}

// The kernel's exit value text: "0x%lx" of the result as unsigned.
inline std::string exit_value(int64_t result) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx",
                static_cast<unsigned long long>(static_cast<uint64_t>(result)));
  return text;
}

// One row of strace -c's table (dprobe --summary prints the same).
struct SummaryRow {
  uint64_t calls = 0;
  uint64_t errors = 0;
  bool operator==(const SummaryRow&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const SummaryRow& row) {
  return os << row.calls << " calls, " << row.errors << " errors";
}

// The rows of strace -c's table, by system call name (the total too).
inline std::map<std::string, SummaryRow> summary_rows(const std::string& text) {
  std::map<std::string, SummaryRow> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    // "% time seconds usecs/call calls [errors] syscall"
    if (words.size() < 5 || words.size() > 6 || words[0].find('.') == std::string::npos) continue;
    SummaryRow row;
    row.calls = std::stoull(words[3]);
    if (words.size() == 6) row.errors = std::stoull(words[4]);
    rows[words.back()] = row;
  }
  return rows;
}

}  // namespace dprobe::integration

#endif  // DPROBE_TESTS_INTEGRATION_SYSCALL_LINES_H_
