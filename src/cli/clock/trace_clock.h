// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The CLI's end of the trace clock (trace/trace_clock.h). Hits stamp raw
// CPU counter cycles where the kernel itself keeps time with that counter
// (its clocksource is "tsc" on x86_64, "arch_sys_counter" on arm64: synced
// across CPUs and of constant rate; or "kvm-clock" on a KVM guest whose
// host vouches for its TSC, cli/clock/kvm_clock.h); the CLI turns them into CLOCK_MONOTONIC
// nanoseconds at output time, so the trace's time line is the one it
// always was and the one a CLOCK_MONOTONIC fallback process writes.
//
// The conversion is the line through the kernel's own readings: pairs of
// (counter, CLOCK_MONOTONIC) read back to back, the first at start and a
// new one at every drain pass, the slope taken over the whole baseline.
// Where the kernel publishes its multiplier and shift (a perf event's mmap
// page with cap_user_time, the way perf converts; kvm-clock's record, the
// way the vDSO converts), the slope is the kernel's. Anywhere else (no
// such clocksource) hits read CLOCK_MONOTONIC through the vDSO, which is
// exact and ~20 ns slower.
//
//   TraceClock& clock = TraceClock::get();
//   probes.cycle_clock = clock.has_cycles();
//   formatter.set_scale(clock.scale(kind));   // once per drain pass
//   uint64_t upto = clock.now_ns() - settle;
#ifndef DPROBE_CLI_CLOCK_TRACE_CLOCK_H_
#define DPROBE_CLI_CLOCK_TRACE_CLOCK_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "trace/trace_clock.h"

namespace dprobe::cli {

// Now, on CLOCK_MONOTONIC: the trace's time line, and how fast counters
// the traced program could overwrite may plausibly grow.
uint64_t monotonic_ns();

class TraceClock {
 public:
  // The process's one clock, set up at first use.
  static TraceClock& get();

  bool has_cycles() const { return has_cycles_; }
  // How records stamped with `kind` become CLOCK_MONOTONIC nanoseconds,
  // with the kernel's readings up to now.
  trace::TimestampScale scale(trace::ClockKind kind);
  // Now, in the same nanoseconds.
  uint64_t now_ns() const;

  // The clocksource whose counter hits may read, or nullopt (for tests and
  // docs/output.md, "Timestamps": "tsc", "arch_sys_counter", "kvm-clock").
  static std::optional<std::string> cycle_clocksource();

 private:
  struct Anchor {
    uint64_t cycles = 0;
    uint64_t ns = 0;
  };
  TraceClock();
  static Anchor read_anchor();
  void update_conversion();

  bool has_cycles_ = false;
  std::mutex mutex_;
  Anchor first_;
  Anchor last_;
  std::optional<trace::CycleConversion> kernel_slope_;  // perf's mmap page, or kvm-clock's
  trace::CycleConversion conversion_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_CLOCK_TRACE_CLOCK_H_
