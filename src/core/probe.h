// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One probed address. Several events at one address share it (the kernel's
// aggregate probe): one breakpoint, one slot, a list of handlers.
#ifndef DPROBE_CORE_PROBE_H_
#define DPROBE_CORE_PROBE_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "arch/probe_insn.h"

namespace dprobe::core {

// A handler that is not an event: the probe engine's own use of a probe
// (following the dynamic loader). Called in the trap handler.
using InternalHandler = void (*)(const arch::SavedRegs& regs);

struct Probe {
  uint64_t address = 0;
  uint32_t id = 0;  // never reused: return instances name their probe by it
  arch::ProbeInsn insn;
  uint64_t slot = 0;               // the out-of-line copy
  std::vector<uint8_t> original;   // the bytes the breakpoint replaced
  std::vector<uint32_t> handlers;  // what to run on a hit, in the owner's numbering
  InternalHandler internal = nullptr;
  std::atomic<bool> armed{false};
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_PROBE_H_
