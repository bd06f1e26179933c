// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The calls of a trace file in the layout of the kernel's function_graph
// tracer (Documentation/trace/ftrace.rst), with its funcgraph-proc column
// on, since a user-space trace is read by thread:
//
//   # CPU  TASK/PID         DURATION                  FUNCTION CALLS
//   # |     |    |           |   |                     |   |   |   |
//    0)   app-4242     |               |  main() {
//    0)   app-4242     |   0.714 us    |    leaf();
//    0)   app-4242     | + 12.208 us   |  }
//
// A call with calls or events inside prints `func() {` where it begins
// and `}` with its duration where it returns; one with none inside is one
// line, `func();`. Other events print as comments where they happened,
// `/* EVENT: ARGS */`, as ftrace prints trace events among the calls; when
// the next line is another thread's, a marker says so (ftrace's context
// switch line). Entry records come from `p` probes on the functions'
// first instructions, returns from `r` probes on the same functions.
//
//   std::string text = function_graph(read_trace_file(bytes));
#ifndef DPROBE_CLI_OUTPUT_FUNCTION_GRAPH_H_
#define DPROBE_CLI_OUTPUT_FUNCTION_GRAPH_H_

#include <cstdint>
#include <string>

#include "trace/trace_file.h"

namespace dprobe::cli {

std::string function_graph(const trace::TraceFileContents& file);

// ftrace's duration column: an overhead mark ('+' over 10 us, '!' over
// 100 us, '#' over 1 ms, '*' over 10 ms, '@' over 100 ms, '$' over 1 s),
// microseconds with three decimals, " us", padding, and the bar.
std::string graph_duration(uint64_t ns);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_FUNCTION_GRAPH_H_
