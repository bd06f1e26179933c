// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/ifunc.h"

#include "agent/thread_trace.h"
#include "arch/runtime/platform.h"
#include "core/eh_frame_entries.h"
#include "core/eh_frame_hdr.h"
#include "core/unwind_objects.h"

namespace dprobe::agent {
namespace {

// The [begin, end) of the FDE that covers `pc`, or nullopt.
std::optional<IfuncImplementation> with_unwind_extent(uint64_t pc) {
  const core::UnwindMemory memory = core::safe_unwind_memory();
  for (const core::UnwindObject& object : core::loaded_unwind_objects()) {
    if (pc < object.text_begin || pc >= object.text_end) continue;
    IfuncImplementation found{pc, pc, 0};
    const uint64_t fde_address = core::find_fde(object, pc, memory);
    core::unwinding::Tables tables(memory);
    core::unwinding::Cie cie;
    core::unwinding::Fde fde;
    if (fde_address != 0 && core::unwinding::parse_fde(tables, fde_address, cie, fde) &&
        pc >= fde.pc_begin && pc < fde.pc_end) {
      found.function_begin = fde.pc_begin;
      found.function_size = fde.pc_end - fde.pc_begin;
    }
    return found;
  }
  return std::nullopt;
}

}  // namespace

std::optional<IfuncImplementation> resolve_ifunc(uint64_t resolver) noexcept {
  uint64_t implementation = 0;
  {
    const AgentWork work;
    implementation = arch::call_ifunc_resolver(resolver);
  }
  if (implementation == 0) return std::nullopt;
  return with_unwind_extent(implementation);
}

}  // namespace dprobe::agent
