// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The text the kernel shows in events/GRP/EVENT/format, for our record
// layout: the common fields are RecordHeader's, then the ip fields, then one
// field per argument, then the print fmt. Tools that read ftrace formats
// (trace-cmd, perf's parsers) can decode our records from it.
//
//   std::string text = format_description(event);  // "name: ...\nID: ...\n"
#ifndef DPROBE_TRACE_EVENT_FORMAT_H_
#define DPROBE_TRACE_EVENT_FORMAT_H_

#include <string>

#include "trace/event.h"

namespace dprobe::trace {

// `ev` must have been laid out (layout_event) so argument offsets are set.
std::string format_description(const EventDesc& ev);

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_EVENT_FORMAT_H_
