// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The CPU's free-running counter, read in a few cycles from user space: the
// time stamp counter on x86_64, the virtual count register on arm64. A
// probe hit stamps its record with it; the CLI converts it to the kernel's
// trace clock at output time (trace/trace_clock.h), with the kernel's own
// conversion, as perf and ftrace's x86-tsc clock do.
//
//   const uint64_t cycles = arch::read_cycle_counter();
#ifndef DPROBE_ARCH_RUNTIME_CYCLE_COUNTER_H_
#define DPROBE_ARCH_RUNTIME_CYCLE_COUNTER_H_

#include <cstdint>

namespace dprobe::arch {

inline uint64_t read_cycle_counter() noexcept {
#if defined(__x86_64__)
  uint32_t low;
  uint32_t high;
  __asm__ volatile("rdtsc" : "=a"(low), "=d"(high));
  return (uint64_t{high} << 32) | low;
#elif defined(__aarch64__)
  uint64_t count;
  __asm__ volatile("mrs %0, cntvct_el0" : "=r"(count));
  return count;
#else
#error "no cycle counter for this architecture"
#endif
}

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_CYCLE_COUNTER_H_
