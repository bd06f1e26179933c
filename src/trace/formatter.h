// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Turns binary event records (record.h, laid out by layout_event) into the
// kernel's ftrace trace lines, or into JSON lines. The formatter never
// allocates beyond growing `out`, so a caller that reuses one string formats
// millions of lines a second.
//
//   TraceFormatter formatter(&symbolizer);  // or nullptr: addresses raw
//   std::string line;
//   for (each record) {
//     line.clear();
//     formatter.format_text(event, record, comm, line);
//     write(fd, line.data(), line.size());
//   }
//
// A malformed record (shorter than the event's fixed fields, a __data_loc
// pointing outside it) prints what is safe and `(bad)` for each broken field.
#ifndef DPROBE_TRACE_FORMATTER_H_
#define DPROBE_TRACE_FORMATTER_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "trace/event.h"
#include "trace/record.h"
#include "trace/symbolizer.h"
#include "trace/trace_clock.h"

namespace dprobe::trace {

class TraceFormatter {
 public:
  // `symbolizer` may be null, and must outlive the formatter otherwise.
  explicit TraceFormatter(const Symbolizer* symbolizer = nullptr) : symbolizer_(symbolizer) {}

  // How the records' timestamps become trace-clock nanoseconds; taken as
  // nanoseconds already until set.
  void set_scale(const TimestampScale& scale) { scale_ = scale; }
  uint64_t timestamp_ns(const RecordHeader& header) const { return scale_.to_ns(header.timestamp); }

  // Appends one ftrace line, '\n' included, byte for byte what the kernel
  // prints for a probe event:
  //   "              ls-1882    [000] .....    86.566478: opendir: (opendir+0x0/0x9a) d=0x1"
  // `ns`: the record's time in trace-clock ns where the caller has it (a
  // reader that keeps each thread's times in order), else its header's.
  void format_text(const EventDesc& ev, std::span<const std::byte> record, std::string_view comm,
                   std::string& out, std::optional<uint64_t> ns = std::nullopt) const;

  // Appends one JSON object and '\n':
  //   {"ts":86.566478,"comm":"ls","pid":1880,"tid":1882,"cpu":0,"group":"g",
  //    "event":"opendir","ip":"0x7fdc221d4e90","sym":"opendir+0x0/0x9a","args":{...}}
  // Return events have "func","func_sym" (the bare name),"ret_ip","ret_sym"
  // instead of "ip","sym"; a *_sym key is left out when the address is
  // unknown. u/s values are numbers, x and symbol values strings, a faulted
  // string null, a broken field the string "(bad)".
  // `own`: the process's and thread's ids in its own PID namespace, where
  // the record's are the host's: "ns_pid","ns_tid" follow "tid".
  struct NamespaceIds {
    uint32_t pid;
    uint32_t tid;
  };
  void format_json(const EventDesc& ev, std::span<const std::byte> record, std::string_view comm,
                   std::string& out, std::optional<uint64_t> ns = std::nullopt,
                   const NamespaceIds* own = nullptr) const;

 private:
  const Symbolizer* symbolizer_;
  TimestampScale scale_;
};

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_FORMATTER_H_
