// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The kernel's event filter language (Documentation/trace/events.rst,
// "Event filtering"; kernel/trace/trace_events_filter.c), compiled to a
// trace::FilterProgram the agent runs on every hit. What the kernel's
// `filter` file accepts is accepted, what it refuses is refused with its
// message and with the column its error_log's caret points at.
//
//   auto program = compile_filter(R"(size > 4096 && comm ~ "py*")", record_fields(event));
//   if (!program) report(program.error().message, program.error().column);
//
// Predicates are FIELD OP VALUE: numbers (decimal, 0x hex, 0 octal,
// negative for signed fields) with == != < <= > >= & (bits set), quoted
// strings with == != ~ (a glob; a leading ! inverts it). Joined with && and
// ||, && binding tighter; ! before a predicate or a parenthesized group.
// Fields: the event's arguments by name, common_pid, cpu (CPU,
// common_cpu), comm (COMM), and on return events $duration (dprobe's own).
// Empty text, and "0" (the kernel's way to clear a filter), compile to the
// empty program: every hit passes.
#ifndef DPROBE_LANG_EVENT_FILTER_H_
#define DPROBE_LANG_EVENT_FILTER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "trace/hit/event_filter.h"
#include "trace/record_fields.h"

namespace dprobe::lang {

struct FilterError {
  std::string message;  // the kernel's text for the error (its err_text[])
  size_t column = 0;    // 0-based position in the filter text of the caret
};

Result<trace::FilterProgram, FilterError> compile_filter(
    std::string_view text, const std::vector<trace::RecordField>& fields);

}  // namespace dprobe::lang

#endif  // DPROBE_LANG_EVENT_FILTER_H_
