// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The time and the CPU for event records, read without a system call and
// without calling into libc (whose clock_gettime the user may be probing):
// the CPU's counter (a few ns), or else the vDSO's own clock_gettime (~20
// ns), found through the auxiliary vector; and the CPU number glibc's
// restartable-sequences area keeps current.
//
//   init_clock();                             // once, at start-up
//   choose_record_clock(probes.cycle_clock);  // at each session's start
//   uint64_t t = record_time();               // on a hit
#ifndef DPROBE_AGENT_VDSO_H_
#define DPROBE_AGENT_VDSO_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "arch/runtime/cycle_counter.h"
#include "arch/runtime/platform.h"
#include "trace/trace_clock.h"

namespace dprobe::agent {

void init_clock();
uint64_t monotonic_ns() noexcept;
// A symbol of the vDSO, from its own dynamic symbol table; nullptr if none.
void* vdso_symbol(const char* name);
inline uint32_t current_cpu() noexcept;

// The time a record carries: the CPU's counter where the CLI asked for it
// and this process may read it (the CLI converts it), CLOCK_MONOTONIC
// otherwise. Returns the clock chosen.
trace::ClockKind choose_record_clock(bool cycles_wanted) noexcept;
inline uint64_t record_time() noexcept;

inline std::atomic<bool> g_record_cycles{false};

namespace detail {
// Where the C library's restartable-sequences area of the calling thread is,
// from its thread pointer (init_clock learns it); none: ask the vDSO.
inline constinit bool g_has_rseq = false;
inline constinit ptrdiff_t g_rseq_offset = 0;
uint32_t current_cpu_from_vdso() noexcept;
}  // namespace detail

uint32_t current_cpu() noexcept {
  if (detail::g_has_rseq) [[likely]] {
    // struct rseq starts with cpu_id_start, then cpu_id (both u32); the
    // kernel keeps cpu_id current, or -1 where it did not register it.
    uint32_t cpu;
    __builtin_memcpy(&cpu, arch::thread_pointer() + detail::g_rseq_offset + 4, sizeof(cpu));
    if (static_cast<int32_t>(cpu) >= 0) [[likely]]
      return cpu;
  }
  return detail::current_cpu_from_vdso();
}

uint64_t record_time() noexcept {
  if (g_record_cycles.load(std::memory_order_relaxed)) [[likely]]
    return arch::read_cycle_counter();
  return monotonic_ns();
}

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_VDSO_H_
