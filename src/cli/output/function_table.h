// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The calls of a trace file as a table per function, as uftrace's `report`
// prints it: total time, self time (the total less the calls it made that
// are in the trace), calls, and the average and longest call, the function
// that took longest first.
//
//     Total time   Self time       Calls    Avg time    Max time  Function
//     ==========  ==========  ==========  ==========  ==========  ========
//      19.600 ms    2.104 ms           1   19.600 ms   19.600 ms  main
//
//   std::string text = function_table(read_trace_file(bytes));
#ifndef DPROBE_CLI_OUTPUT_FUNCTION_TABLE_H_
#define DPROBE_CLI_OUTPUT_FUNCTION_TABLE_H_

#include <cstdint>
#include <string>

#include "trace/trace_file.h"

namespace dprobe::cli {

std::string function_table(const trace::TraceFileContents& file);

// "  1.234 us", "197.000 ns", " 19.600 ms", "  3.000  s": the unit keeps
// the number under 1000, as uftrace's columns do.
std::string table_time(uint64_t ns);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_FUNCTION_TABLE_H_
