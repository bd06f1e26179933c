// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The kernel's hist trigger command (Documentation/trace/histogram.rst),
// compiled against an event's fields (trace/record_fields.h):
//
//   hist:keys=<field1[,field2,...]>[:values=<field1[,field2,...]>]
//       [:sort=<field1[,field2]>][:size=#entries][:clock=...] [if <filter>]
//
// `key=` is `keys=`; `val=` and `vals=` are `values=`. A field is an event
// field, common_pid, cpu, comm (common_comm) or, on return events,
// $duration, with at most one modifier: .hex .sym .sym-offset .syscall
// .log2 .buckets=N .usecs, .execname on common_pid; a key may also be
// stacktrace (common_stacktrace). Sort fields take .ascending or
// .descending. The kernel's limits hold: 3 keys, hitcount and 2 values, 2
// sort fields, a key of at most 384 bytes (a string counts 256, a stack
// 128), size rounded up to a power of two from 128 to 131072.
//
// Errors carry the kernel's hist error text (its err_text) where it has
// one, and the column of the part at fault in `text`. What the kernel has
// but dprobe does not (variables, actions, expressions, named triggers,
// pause/cont/clear, nohitcount, .percent/.graph, common_timestamp) is
// refused by name.
//
//   auto spec = parse_hist_trigger("hist:keys=size.log2:sort=hitcount.descending",
//                                  trace::record_fields(event));
//   if (!spec) report(spec.error().message, spec.error().column);
#ifndef DPROBE_LANG_HIST_TRIGGER_H_
#define DPROBE_LANG_HIST_TRIGGER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "trace/hist_spec.h"
#include "trace/record_fields.h"

namespace dprobe::lang {

struct HistError {
  std::string message;  // the kernel's hist error text, or dprobe's for what it refuses
  size_t column = 0;    // caret position in the parsed text
};

// `text` is the trigger as written after GRP/EVENT: "hist:keys=...". The
// spec's text is the kernel's normalized form; its filter is the text
// after " if ", left for the filter compiler.
Result<trace::HistSpec, HistError> parse_hist_trigger(
    std::string_view text, const std::vector<trace::RecordField>& fields);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_HIST_TRIGGER_H_
