// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A trace file as the Chrome trace-event JSON that Perfetto's UI and
// chrome://tracing open: each process and thread named (metadata events),
// each entry probe an instant event ("ph":"i") whose args are the record as
// `--json` prints it, and each return probe paired with the entry probe of
// its function on its thread (the entry's address is the return's
// function; the innermost open one) as a complete slice ("ph":"X", ts and
// dur in microseconds), so that calls nest per thread on the timeline. A
// return probe with no entry probe is a slice from its record's own entry
// time (files since version 2), named by the return event.
//
//   std::string json = perfetto_json(read_trace_file(data));
#ifndef DPROBE_CLI_OUTPUT_PERFETTO_H_
#define DPROBE_CLI_OUTPUT_PERFETTO_H_

#include <string>

#include "trace/trace_file.h"

namespace dprobe::cli {

std::string perfetto_json(const trace::TraceFileContents& file);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_PERFETTO_H_
