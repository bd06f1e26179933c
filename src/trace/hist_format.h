// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A merged hist table printed as the kernel's events/GRP/EVENT/hist file
// (hist_trigger_show): the comment header with the trigger, one line per
// entry in sort order with the kernel's field widths, the Totals block.
//
//   # event histogram
//   #
//   # trigger info: hist:keys=size.log2:vals=hitcount:sort=hitcount.descending:size=2048 [active]
//   #
//
//   { size: ~ 2^12 } hitcount:         12
//   { size: ~ 2^5  } hitcount:          3
//
//   Totals:
//       Hits: 15
//       Entries: 2
//       Dropped: 0
//
// What the kernel resolves at print time is resolved here: .sym and
// .sym-offset addresses and stacktrace frames through a Symbolizer (as
// %ps / %pS: "name", "name+0xoff/0xsize", with " [object]" as the kernel
// names a module; "0x..." when unknown), .syscall numbers through a
// callback. .execname needs nothing: the table keeps the comm of each
// key's first hit.
#ifndef DPROBE_TRACE_HIST_FORMAT_H_
#define DPROBE_TRACE_HIST_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/hist_spec.h"
#include "trace/hit/hist_table.h"
#include "trace/symbolizer.h"

namespace dprobe::trace {

struct HistNames {
  const Symbolizer* symbols = nullptr;
  // .syscall: a system call number's name; unset or "" prints "unknown_syscall".
  std::function<std::string(uint64_t)> syscall_name;
};

// The hist file for `result`. With a non-empty `event` ("GRP/EVENT") the
// text starts with one more comment line, "# events/GRP/EVENT/hist", that
// names the file it stands for; with "" it is exactly the file.
std::string format_hist(const HistSpec& spec, std::string_view event, const HistResult& result,
                        const HistNames& names);
std::string format_hist(const HistSpec& spec, std::string_view event, const HistResult& result,
                        const Symbolizer* symbols);

// The order the entries print in: by spec.sort (hitcount ascending when
// empty), a second sort key ordering entries the first finds equal, ties
// kept in merge order. Keys compare as the kernel's tracing_map does: as
// the field's type (its size and sign), strings byte by byte, stacks all
// equal; values and hitcount as u64.
std::vector<size_t> hist_sort_order(const HistSpec& spec, const HistResult& result);

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_HIST_FORMAT_H_
