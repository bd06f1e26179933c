// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// System calls as strace prints them (--format strace): each thread's
// enter and exit records of a call paired into one line,
//
//   openat(AT_FDCWD, "/etc/hostname", O_RDONLY|O_CLOEXEC) = 3
//   openat(AT_FDCWD, "/nonexistent", O_RDONLY) = -1 ENOENT (No such file or directory)
//
// with strace's options: -T (<0.000012> after the result), -t -tt -ttt
// and -r (before the call), and [pid N] before every line when the trace
// holds more than one thread. A call another thread's line interrupts
// prints as strace's `read(3, ... <unfinished ...>` and, at its return,
// `<... read resumed>) = 5`. The enter records are those of the kernel's
// syscalls:sys_enter_NAME events or of the event probes --format strace
// makes (group "strace", which copy the file names); the exit records
// those of syscalls:sys_exit_NAME. Other records are left out.
//
//   StraceOptions options{.durations = true};
//   std::string text = strace_text(read_trace_file(bytes), options);
#ifndef DPROBE_CLI_OUTPUT_STRACE_FORMAT_H_
#define DPROBE_CLI_OUTPUT_STRACE_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "cli/output/strace_arguments.h"
#include "trace/trace_file.h"

namespace dprobe::cli {

// strace's -t, -tt, -ttt, -r.
enum class StraceTimestamps : uint8_t { kNone, kSeconds, kMicros, kEpoch, kRelative };

struct StraceOptions {
  size_t string_limit = strace::kDefaultStringLimit;  // -s
  bool durations = false;                             // -T
  StraceTimestamps timestamps = StraceTimestamps::kNone;
  // The wall clock (CLOCK_REALTIME) less the trace clock (CLOCK_MONOTONIC),
  // in ns: what -t, -tt and -ttt need, which only the live trace knows.
  int64_t wall_offset_ns = 0;
};

// "t", "tt", "ttt", "r": the --timestamps values; nullopt for another.
std::optional<StraceTimestamps> parse_strace_timestamps(std::string_view text);

std::string strace_text(const trace::TraceFileContents& file, const StraceOptions& options);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_STRACE_FORMAT_H_
