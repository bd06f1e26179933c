// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Why a probe could not be armed: one status that travels unchanged from
// the instruction decoder through the registry and the agent's arm report
// to the CLI, which alone maps it to the error table (cli/plan/arm_errors.cc),
// as the kernel's arch_prepare_kprobe errno reaches the tracefs write.
//
//   return unexpected(Refusal{ArmStatus::kRejected, "rip-relative call"});
#ifndef DPROBE_ARCH_REFUSAL_H_
#define DPROBE_ARCH_REFUSAL_H_

#include <cstdint>
#include <string>

namespace dprobe::arch {

enum class ArmStatus : uint8_t {
  kArmed,
  kNotBoundary,  // inside an instruction (the kernel's EILSEQ)
  kRejected,     // an instruction that cannot be probed
  kBlacklisted,  // the agent itself, the signal return trampoline, ...
  kNoSlot,       // no out-of-line slot within reach
  kNotMapped,    // the address is not in executable memory of the process
  kPatchFailed,  // writing the breakpoint failed
};
inline constexpr ArmStatus kLastArmStatus = ArmStatus::kPatchFailed;

struct Refusal {
  ArmStatus status;
  std::string message;  // the reason; for kNotBoundary, then the listing
};

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_REFUSAL_H_
