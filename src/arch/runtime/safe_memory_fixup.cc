// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// fixup_memory_fault, for every ISA: look the faulting pc up in the fault
// table of arch/<isa>/runtime/safe_memory_<isa>.S and resume at the
// range's exit, which sets the return value itself (0 or -1) and returns
// to the caller.
#include <ucontext.h>

#include <cstdint>

#include "arch/runtime/context.h"
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
  ucontext_t& context = *static_cast<ucontext_t*>(ucontext);
  const uint64_t pc = context_pc(context);
  for (uint32_t i = 0; i < dprobe_safe_memory_fault_count; ++i) {
    const DprobeFaultEntry& entry = dprobe_safe_memory_faults[i];
    if (pc >= resolve(entry.begin) && pc < resolve(entry.end)) {
      set_context_pc(context, resolve(entry.exit));
      return true;
    }
  }
  return false;
}

}  // namespace dprobe::arch
