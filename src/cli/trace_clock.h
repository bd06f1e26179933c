// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The CLI's end of the trace clock (trace/trace_clock.h): whether hits may
// stamp raw CPU counter cycles, and how to turn those into the kernel's
// trace-clock nanoseconds. The kernel says how in the first page of any
// perf event's mapping (time_zero, time_mult, time_shift, under a sequence
// lock), as it does for perf itself; the CLI opens a dummy software event
// on itself once to read it. Where that is not allowed (perf_event_paranoid)
// or the kernel does not offer it (cap_user_time_zero), hits read
// CLOCK_MONOTONIC instead.
//
//   const TraceClock& clock = TraceClock::get();
//   probes.cycle_clock = clock.has_cycles();
//   formatter.set_scale(clock.scale(kind));
//   uint64_t upto = clock.now_ns() - settle;
#ifndef DPROBE_CLI_TRACE_CLOCK_H_
#define DPROBE_CLI_TRACE_CLOCK_H_

#include <cstdint>

#include "trace/trace_clock.h"

struct perf_event_mmap_page;

namespace dprobe::cli {

class TraceClock {
 public:
  // The process's one clock, opened at first use.
  static const TraceClock& get();

  bool has_cycles() const { return page_ != nullptr; }
  // The conversion of records stamped with `kind`, as the kernel has it now.
  trace::TimestampScale scale(trace::ClockKind kind) const;
  // Now, in trace-clock nanoseconds.
  uint64_t now_ns() const;

 private:
  TraceClock();
  trace::CycleConversion conversion() const;

  const volatile perf_event_mmap_page* page_ = nullptr;
  int64_t monotonic_offset_ = 0;  // trace clock - CLOCK_MONOTONIC
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_TRACE_CLOCK_H_
