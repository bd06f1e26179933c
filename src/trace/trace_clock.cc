// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/trace_clock.h"

namespace dprobe::trace {

// time_zero + cycles * mult >> shift, the product taken on 128 bits: a
// 64-bit one overflows once the shift passes 32 (kvm-clock's is 33 for a
// TSC above 2^31 Hz: its record halves the count before multiplying).
uint64_t cycles_to_ns(uint64_t cycles, const CycleConversion& c) {
  if (c.short_counter) cycles = c.cycles + ((cycles - c.cycles) & c.mask);
  __extension__ using Wide = unsigned __int128;  // GCC and Clang both have it
  return c.zero + static_cast<uint64_t>((static_cast<Wide>(cycles) * c.mult) >> c.shift);
}

}  // namespace dprobe::trace
