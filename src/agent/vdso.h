// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The time and the CPU for event records, read without a system call and
// without calling into libc (whose clock_gettime the user may be probing):
// the vDSO's own clock_gettime, found through the auxiliary vector, and the
// CPU number glibc's restartable-sequences area keeps current.
//
//   init_clock();                // once, at start-up
//   uint64_t ns = monotonic_ns();  // on a hit
#ifndef DPROBE_AGENT_VDSO_H_
#define DPROBE_AGENT_VDSO_H_

#include <cstdint>

namespace dprobe::agent {

void init_clock();
uint64_t monotonic_ns() noexcept;
uint32_t current_cpu() noexcept;

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_VDSO_H_
