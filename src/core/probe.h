// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One probed address. Several events at one address share it (the kernel's
// aggregate probe): one breakpoint, one slot, a list of handlers.
#ifndef DPROBE_CORE_PROBE_H_
#define DPROBE_CORE_PROBE_H_

#include <cstdint>
#include <vector>

#include "arch/probe_insn.h"

namespace dprobe::core {

struct Probe {
  uint64_t address = 0;
  arch::ProbeInsn insn;
  uint64_t slot = 0;               // the out-of-line copy
  std::vector<uint8_t> original;   // the bytes the breakpoint replaced
  std::vector<uint32_t> handlers;  // what to run on a hit, in the owner's numbering
  bool armed = false;
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_PROBE_H_
