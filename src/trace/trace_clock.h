// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The time in an event record, and its conversion to the nanoseconds of the
// trace line (CLOCK_MONOTONIC). Where the kernel keeps time with the CPU's
// counter, a hit stamps raw counter cycles (a few ns, against ~20 for the
// vDSO's clock_gettime) and the CLI converts them later, linearly, as
// zero + cycles * mult >> shift: the arithmetic of the kernel's clocksources
// and of perf's mmap page (cli/clock/trace_clock.h says where the numbers come
// from). Elsewhere a hit reads CLOCK_MONOTONIC through the vDSO.
//
//   TimestampScale scale{ClockKind::kCycles, conversion};
//   uint64_t ns = scale.to_ns(header.timestamp);
#ifndef DPROBE_TRACE_TRACE_CLOCK_H_
#define DPROBE_TRACE_TRACE_CLOCK_H_

#include <cstdint>

namespace dprobe::trace {

enum class ClockKind : uint32_t {
  kMonotonic = 0,  // nanoseconds of CLOCK_MONOTONIC
  kCycles = 1,     // the CPU's counter (arch/runtime/cycle_counter.h)
};

// zero, mult and shift as in the perf mmap page's time_zero, time_mult and
// time_shift, and for a counter narrower than 64 bits its time_cycles and
// time_mask (include/uapi/linux/perf_event.h documents the arithmetic).
struct CycleConversion {
  uint64_t zero = 0;
  uint32_t mult = 0;
  uint16_t shift = 0;
  bool short_counter = false;
  uint64_t cycles = 0;
  uint64_t mask = 0;
};

uint64_t cycles_to_ns(uint64_t cycles, const CycleConversion& conversion);

// How one process's records turn into trace-clock nanoseconds.
struct TimestampScale {
  ClockKind kind = ClockKind::kMonotonic;
  CycleConversion conversion;

  uint64_t to_ns(uint64_t raw) const {
    return kind == ClockKind::kCycles ? cycles_to_ns(raw, conversion) : raw;
  }
};

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_TRACE_CLOCK_H_
