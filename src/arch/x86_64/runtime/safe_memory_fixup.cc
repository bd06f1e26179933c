// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The x86_64 side of fixup_memory_fault: look the faulting rip up in the
// fault table of safe_memory_x86_64.S and resume at the range's exit,
// which sets the return value itself (0 or -1) and returns to the caller.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // REG_RIP
#endif
#include <ucontext.h>

#include <cstdint>

#include "arch/runtime/safe_memory.h"

// One entry of the assembly's table. Fields are offsets from their own
// address, so the table needs no relocation in a position-independent
// agent.
struct DprobeFaultEntry {
  int32_t begin;
  int32_t end;
  int32_t exit;
};
static_assert(sizeof(DprobeFaultEntry) == 12, "the assembly steps through the table by 12");

extern "C" {
__attribute__((visibility("hidden"))) extern const DprobeFaultEntry dprobe_safe_memory_faults[];
__attribute__((visibility("hidden"))) extern const uint32_t dprobe_safe_memory_fault_count;
}

namespace dprobe::arch {
namespace {

uintptr_t resolve(const int32_t& field) {
  return reinterpret_cast<uintptr_t>(&field) + static_cast<uintptr_t>(static_cast<intptr_t>(field));
}

}  // namespace

bool fixup_memory_fault(void* ucontext) noexcept {
  if (ucontext == nullptr) return false;
  greg_t& rip = static_cast<ucontext_t*>(ucontext)->uc_mcontext.gregs[REG_RIP];
  const auto pc = static_cast<uintptr_t>(rip);
  for (uint32_t i = 0; i < dprobe_safe_memory_fault_count; ++i) {
    const DprobeFaultEntry& entry = dprobe_safe_memory_faults[i];
    if (pc >= resolve(entry.begin) && pc < resolve(entry.end)) {
      rip = static_cast<greg_t>(resolve(entry.exit));
      return true;
    }
  }
  return false;
}

}  // namespace dprobe::arch
