// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/trace_clock.h"

namespace dprobe::trace {

// time_zero + cycles * mult >> shift, split so that the product cannot
// overflow 64 bits: the high part of the count is multiplied whole, the
// low part (below 2^shift) with the shift applied after.
uint64_t cycles_to_ns(uint64_t cycles, const CycleConversion& c) {
  if (c.short_counter) cycles = c.cycles + ((cycles - c.cycles) & c.mask);
  const uint64_t quotient = cycles >> c.shift;
  const uint64_t remainder = cycles & ((uint64_t{1} << c.shift) - 1);
  return c.zero + quotient * c.mult + ((remainder * c.mult) >> c.shift);
}

}  // namespace dprobe::trace
