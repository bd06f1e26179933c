// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/ifunc.h"

#include <span>

#include "agent/hit/thread_trace.h"
#include "arch/probe_insn.h"
#include "arch/runtime/platform.h"
#include "core/hit/eh_frame_entries.h"
#include "core/hit/eh_frame_hdr.h"
#include "core/hit/unwind_objects.h"

namespace dprobe::agent {
namespace {

// How far around the implementation other functions are read for branches
// into its first bytes, and how many bytes a jump may replace at most.
constexpr uint64_t kNeighbourhood = 4096;
constexpr uint64_t kMaxReplacedBytes = 20;

struct CodeRange {
  uint64_t begin;
  uint64_t end;
};

// The FDE that covers `pc` in `object`, or nullopt.
std::optional<CodeRange> fde_around(const core::UnwindObject& object, uint64_t pc) {
  const core::UnwindMemory memory = core::safe_unwind_memory();
  const uint64_t fde_address = core::find_fde(object, pc, memory);
  core::unwinding::Tables tables(memory);
  core::unwinding::Cie cie;
  core::unwinding::Fde fde;
  if (fde_address == 0 || !core::unwinding::parse_fde(tables, fde_address, cie, fde) ||
      pc < fde.pc_begin || pc >= fde.pc_end) {
    return std::nullopt;
  }
  return CodeRange{fde.pc_begin, fde.pc_end};
}

// Whether code near `function` may branch into its first bytes from outside
// it. Hand-written implementations share code: glibc's mempcpy sets its
// result and jumps to memmove's second instruction. A function known by its
// unwind information alone has no symbol to bound it, so its neighbours
// (each decoded from its own FDE's start) are read too. Any that does not
// decode counts as one that may.
bool entered_from_outside(const core::UnwindObject& object, CodeRange function) {
  const uint64_t first = function.begin;
  const uint64_t from =
      first > object.text_begin + kNeighbourhood ? first - kNeighbourhood : object.text_begin;
  const uint64_t to = std::min(function.end + kNeighbourhood, object.text_end);
  for (uint64_t pc = from; pc < to;) {
    const auto other = fde_around(object, pc);
    if (!other) {
      ++pc;  // a gap between functions (padding): on to the next FDE
      continue;
    }
    pc = other->end;
    if (other->begin == function.begin) continue;
    const std::span code(reinterpret_cast<const uint8_t*>(other->begin), other->end - other->begin);
    const auto targets = arch::code_targets(code, other->begin);
    if (!targets) return true;
    for (const uint64_t target : *targets) {
      // Into the bytes a jump may replace, which end with the function.
      if (target > first && target < std::min(first + kMaxReplacedBytes, function.end)) return true;
    }
  }
  return false;
}

// The implementation with its extent where that is safe to jump-optimize.
std::optional<IfuncImplementation> with_unwind_extent(uint64_t pc) {
  for (const core::UnwindObject& object : core::loaded_unwind_objects()) {
    if (pc < object.text_begin || pc >= object.text_end) continue;
    IfuncImplementation found{pc, pc, 0};
    const auto function = fde_around(object, pc);
    if (function && function->begin == pc && !entered_from_outside(object, *function)) {
      found.function_begin = function->begin;
      found.function_size = function->end - function->begin;
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
