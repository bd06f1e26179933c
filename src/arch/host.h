// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The names the rest of the code needs for the ISA this binary was built
// for, so that no file outside src/arch asks the compiler which it is.
// Header-only: the symbols layer and the CLI use it without linking arch.
#ifndef DPROBE_ARCH_HOST_H_
#define DPROBE_ARCH_HOST_H_

#include <elf.h>

#include <cstdint>
#include <string_view>

namespace dprobe::arch {

#if defined(__aarch64__)
inline constexpr uint16_t kHostElfMachine = EM_AARCH64;
inline constexpr std::string_view kHostMultiarch = "aarch64-linux-gnu";
// The clocksource whose counter a hit may read itself (cntvct_el0).
inline constexpr std::string_view kCycleClocksource = "arch_sys_counter";
inline constexpr std::string_view kParavirtCycleClocksource = "";
#elif defined(__x86_64__)
inline constexpr uint16_t kHostElfMachine = EM_X86_64;
inline constexpr std::string_view kHostMultiarch = "x86_64-linux-gnu";
inline constexpr std::string_view kCycleClocksource = "tsc";  // rdtsc
// A KVM guest's clocksource, whose vDSO reads the TSC too where the host
// vouches for it (cli/clock/kvm_clock.h).
inline constexpr std::string_view kParavirtCycleClocksource = "kvm-clock";
#else
// Another host builds the language and the tools; its objects are read as
// x86_64's, and no counter is read directly.
inline constexpr uint16_t kHostElfMachine = EM_X86_64;
inline constexpr std::string_view kHostMultiarch = "x86_64-linux-gnu";
inline constexpr std::string_view kCycleClocksource = "";
inline constexpr std::string_view kParavirtCycleClocksource = "";
#endif

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_HOST_H_
