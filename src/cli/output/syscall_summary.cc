// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The numbers are computed the way strace 6.1 computes them (seconds as a
// double made from whole seconds and nanoseconds, averages rounded to the
// nanosecond, microseconds truncated), so that the same counts print the
// same digits.
#include "cli/output/syscall_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

namespace dprobe::cli {
namespace {

constexpr uint64_t kNanosPerSecond = 1'000'000'000;

// A time as strace holds it. A sum of many nanosecond counts may not fit in
// 64 bits of nanoseconds; in whole seconds and nanoseconds it does.
struct Duration {
  uint64_t seconds = 0;
  uint64_t nanos = 0;
};

Duration duration_of(uint64_t ns) { return {ns / kNanosPerSecond, ns % kNanosPerSecond}; }

void add(Duration& sum, uint64_t ns) {
  const Duration more = duration_of(ns);
  sum.seconds += more.seconds;
  sum.nanos += more.nanos;
  if (sum.nanos >= kNanosPerSecond) {
    sum.seconds += 1;
    sum.nanos -= kNanosPerSecond;
  }
}

// Made in the same two steps as strace's, for the same rounding.
double seconds_of(Duration time) {
  return static_cast<double>(time.seconds) + static_cast<double>(time.nanos) / 1e9;
}

// The nanoseconds of one call, rounded half up as strace's average is.
uint64_t average_ns(uint64_t total_ns, uint64_t calls) {
  const uint64_t rest = total_ns % calls;
  return total_ns / calls + (rest >= calls - calls / 2 ? 1 : 0);
}

uint64_t whole_micros(double seconds) { return static_cast<uint64_t>(seconds * 1e6); }

uint64_t usecs_per_call(const SyscallCount& count) {
  return whole_micros(seconds_of(duration_of(average_ns(count.total_ns, count.calls))));
}

struct Totals {
  Duration time;
  uint64_t calls = 0;
  uint64_t errors = 0;
};

Totals totals_of(const std::vector<SyscallCount>& counts) {
  Totals totals;
  for (const SyscallCount& count : counts) {
    add(totals.time, count.total_ns);
    totals.calls += count.calls;
    totals.errors += count.errors;
  }
  return totals;
}

// strace's columns keep their historical widths and widen to fit the widest
// value (the totals, the largest average, the longest name).
struct Widths {
  size_t seconds = 11;
  size_t usecs = 11;
  size_t calls = 9;
  size_t errors = 9;
  size_t name = 16;  // only the rule is this wide: names are not padded
};

size_t digits(uint64_t value) { return fmt::formatted_size("{}", value); }

Widths widths_of(const std::vector<SyscallCount>& counts, const Totals& totals) {
  Widths widths;
  widths.seconds = std::max(widths.seconds, fmt::formatted_size("{:.6f}", seconds_of(totals.time)));
  widths.calls = std::max(widths.calls, digits(totals.calls));
  widths.errors = std::max(widths.errors, digits(totals.errors));
  for (const SyscallCount& count : counts) {
    widths.usecs = std::max(widths.usecs, digits(usecs_per_call(count)));
    widths.name = std::max(widths.name, count.name.size() + 1);
  }
  return widths;
}

// No errors show as a blank column, not as 0.
std::string errors_text(uint64_t errors) { return errors == 0 ? "" : std::to_string(errors); }

void append_header(std::string& text, const Widths& w) {
  fmt::format_to(std::back_inserter(text), "{:>6} {:>{}} {:>{}} {:>{}} {:>{}} {}\n", "% time",
                 "seconds", w.seconds, "usecs/call", w.usecs, "calls", w.calls, "errors", w.errors,
                 "syscall");
}

void append_rule(std::string& text, const Widths& w) {
  for (const size_t width : {size_t{6}, w.seconds, w.usecs, w.calls, w.errors}) {
    text.append(width, '-');
    text += ' ';
  }
  text.append(w.name, '-');
  text += '\n';
}

void append_row(std::string& text, const Widths& w, double percent, double seconds, uint64_t usecs,
                uint64_t calls, uint64_t errors, std::string_view name) {
  fmt::format_to(std::back_inserter(text), "{:>6.2f} {:>{}.6f} {:>{}} {:>{}} {:>{}} {}\n", percent,
                 seconds, w.seconds, usecs, w.usecs, calls, w.calls, errors_text(errors), w.errors,
                 name);
}

}  // namespace

std::string strace_syscall_name(std::string_view event_name) {
  // Where x86_64's syscall table names a function under another name.
  static constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
      {"newstat", "stat"},   {"newfstat", "fstat"},      {"newlstat", "lstat"},
      {"newuname", "uname"}, {"sendfile64", "sendfile"}, {"umount", "umount2"},
  };
  for (const auto& [event, strace] : kRenamed) {
    if (event_name == event) return std::string(strace);
  }
  return std::string(event_name);
}

std::string render_syscall_summary(std::vector<SyscallCount> counts) {
  std::erase_if(counts, [](const SyscallCount& count) { return count.calls == 0; });
  if (counts.empty()) return "";
  std::stable_sort(counts.begin(), counts.end(), [](const SyscallCount& a, const SyscallCount& b) {
    return a.total_ns > b.total_ns;
  });
  const Totals totals = totals_of(counts);
  const Widths widths = widths_of(counts, totals);
  const double total_seconds = seconds_of(totals.time);

  std::string text;
  append_header(text, widths);
  append_rule(text, widths);
  for (const SyscallCount& count : counts) {
    const double seconds = seconds_of(duration_of(count.total_ns));
    // A call that took no time is 0%, even when no call took any (no 0/0).
    const double percent = seconds == 0 ? 0.0 : 100.0 * seconds / total_seconds;
    append_row(text, widths, percent, seconds, usecs_per_call(count), count.calls, count.errors,
               count.name);
  }
  append_rule(text, widths);
  append_row(text, widths, 100.0, total_seconds,
             whole_micros(total_seconds / static_cast<double>(totals.calls)), totals.calls,
             totals.errors, "total");
  return text;
}

}  // namespace dprobe::cli
