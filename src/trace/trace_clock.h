// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The time in an event record, and its conversion to the nanoseconds of the
// trace line. Where the kernel lets user space read the time from the
// CPU's counter (its perf mmap page says so, and says how), a hit stamps
// raw counter cycles and the CLI converts them later with the kernel's own
// multiplier, shift and offset: that is the kernel's perf clock, the clock
// of ftrace's default "local" trace clock. Elsewhere a hit reads
// CLOCK_MONOTONIC through the vDSO, and the CLI moves it onto the same
// time line by the offset between the two clocks.
//
//   TimestampScale scale{ClockKind::kCycles, conversion, 0};
//   uint64_t ns = scale.to_ns(header.timestamp);
#ifndef DPROBE_TRACE_TRACE_CLOCK_H_
#define DPROBE_TRACE_TRACE_CLOCK_H_

#include <cstdint>

namespace dprobe::trace {

enum class ClockKind : uint32_t {
  kMonotonic = 0,  // nanoseconds of CLOCK_MONOTONIC
  kCycles = 1,     // the CPU's counter (arch/runtime/cycle_counter.h)
};

// The perf mmap page's time_zero, time_mult and time_shift, and for a
// counter narrower than 64 bits time_cycles and time_mask
// (include/uapi/linux/perf_event.h documents the arithmetic).
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
  int64_t monotonic_offset = 0;  // trace clock - CLOCK_MONOTONIC

  uint64_t to_ns(uint64_t raw) const {
    if (kind == ClockKind::kCycles) return cycles_to_ns(raw, conversion);
    return raw + static_cast<uint64_t>(monotonic_offset);
  }
};

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_TRACE_CLOCK_H_
