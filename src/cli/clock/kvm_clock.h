// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// kvm-clock, the paravirtual clocksource of a KVM guest: the host
// publishes how the guest's TSC turns into nanoseconds (struct
// pvclock_vcpu_time_info: ns = system_time + (tsc - tsc_timestamp)
// << tsc_shift * mul >> 32), and the kernel's vDSO reads it in user space
// when the host vouches that the TSC is stable across virtual CPUs
// (PVCLOCK_TSC_STABLE_BIT). Then a hit may stamp a raw TSC read (~10 ns)
// rather than call clock_gettime (~25 ns), and the CLI converts it with
// the same multiplier and shift the vDSO uses.
//
//   if (auto slope = kvm_clock_slope()) { /* cycles, converted by *slope */ }
#ifndef DPROBE_CLI_CLOCK_KVM_CLOCK_H_
#define DPROBE_CLI_CLOCK_KVM_CLOCK_H_

#include <cstddef>
#include <optional>
#include <span>

#include "trace/trace_clock.h"

namespace dprobe::cli {

// The slope (mult, shift; zero left 0) of one pvclock_vcpu_time_info
// record, as its 32 bytes lie in memory; nullopt unless the host says the
// TSC is stable, no update is under way (an even version) and the rate is
// plausible (0.1 to 20 GHz).
std::optional<trace::CycleConversion> pvclock_slope(std::span<const std::byte> record);

// This machine's kvm-clock slope, read once from the page the vDSO reads
// (the first of [vvar_vclock], or the second of a four-page [vvar] on
// kernels before 6.13), or nullopt: not a KVM guest's clock, or no TSC
// the host vouches for. The page is read by a forked child: where the vDSO
// does not use it, touching it raises SIGBUS.
std::optional<trace::CycleConversion> kvm_clock_slope();

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_CLOCK_KVM_CLOCK_H_
