// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit/hit.h"

#include "agent/agent_state.h"
#include "agent/hit/event_record.h"
#include "agent/hit/return_probes.h"
#include "agent/hit/thread_trace.h"
#include "agent/hit/vdso.h"
#include "arch/runtime/context.h"
#include "arch/runtime/safe_memory.h"
#include "base/hit_path.h"
#include "trace/hit/fetch_exec.h"
#include "trace/record.h"

namespace dprobe::agent {
namespace {

class SafeMemory final : public arch::MemoryAccess {
 public:
  bool read(uint64_t address, void* dst, size_t size) override {
    return arch::safe_read(dst, address, size);
  }
  bool write(uint64_t address, const void* src, size_t size) override {
    return arch::safe_write(address, src, size);
  }
};

// Entry events record now; return events take an instance (a hijacked
// return address) and record when the function returns.
[[gnu::always_inline]] DPROBE_HIT_PATH inline void run_handlers(const core::Probe& probe,
                                                                arch::SavedRegs& regs,
                                                                const StackInfo& stack,
                                                                ThreadTrace& thread,
                                                                AgentState& state) noexcept {
  const trace::TraceMemory& memory = *state.memory;
  ensure_ring(thread, memory);
  HitInfo hit{probe.address, current_cpu(), probe.jump_only};
  bool has_return_events = false;
  for (uint32_t id : probe.handlers) {
    const AgentEvent* event = state.events.find(id);
    if (event == nullptr) continue;
    if (event->desc.is_return) {
      has_return_events = true;
    } else {
      record_entry_event(*event, hit, regs, thread, memory);
    }
  }
  if (!has_return_events) return;
  // The counter costs about as much as the rest of the entry: read it only
  // for a session that keeps the entry's time.
  const bool timed = state.entry_times.load(std::memory_order_relaxed);
  hijack_return(probe, regs, stack, timed ? hit.timestamp() : 0, thread, state);
}

DPROBE_HIT_PATH void count_misses(const core::Probe& probe, AgentState& state) noexcept {
  for (uint32_t id : probe.handlers) {
    state.memory->counter(id).misses.fetch_add(1, std::memory_order_relaxed);
  }
}

// The probe's events, unless the hit must not be traced: after fork, once
// the session is over, on the agent's own threads or its own work, or
// inside a handler already (counted as a miss, as the kernel's
// kprobe_running() does).
[[gnu::always_inline]] DPROBE_HIT_PATH inline void on_probe_hit(const core::Probe& probe,
                                                                arch::SavedRegs& regs,
                                                                const StackInfo& stack,
                                                                AgentState& state) noexcept {
  ThreadTrace& thread = current_thread();
  const bool untraced = thread.is_agent || thread.in_agent;
  if (!state.recording.load(std::memory_order_relaxed) || untraced || probe.handlers.empty()) {
    return;
  }
  if (thread.in_handler) {
    count_misses(probe, state);
    return;
  }
  thread.in_handler = true;
  run_handlers(probe, regs, stack, thread, state);
  thread.in_handler = false;
}

// How a trap goes on once its handlers ran, copied out of the probe: the
// agent's own probe (the loader's) may replace the probe object meanwhile.
struct Resume {
  arch::ProbeInsn insn;
  uint64_t slot;
  uint64_t resume_copy;  // the trampoline's copy of the displaced instructions
};

}  // namespace

bool handle_breakpoint(ucontext_t& context) noexcept {
  AgentState& state = agent_state();
  if (!state.registry) return false;
  const uint64_t address = arch::probe_address_of_trap(arch::context_pc(context));
  arch::SavedRegs regs;
  arch::load_regs(context, regs);
  regs.slot[arch::kIpSlot] = address;
  Resume resume;
  core::InternalHandler internal = nullptr;
  {
    // Holds the probe while its handlers run.
    const core::ProbeRegistry::Reader reader(*state.registry);
    const core::Probe* probe = reader.find(address);
    if (probe == nullptr) return false;
    resume = {probe->insn, probe->slot, probe->resume_copy};
    internal = probe->internal;
    const auto alt = reinterpret_cast<uint64_t>(context.uc_stack.ss_sp);
    on_probe_hit(*probe, regs, {alt, alt + context.uc_stack.ss_size}, state);
  }
  // Outside the reader: the loader's probe changes the registry, which may
  // wait for every reader to leave.
  if (internal != nullptr) internal(regs);
  if (resume.resume_copy != 0) {
    // A probe with a trampoline goes on in the trampoline's copy of the
    // displaced instructions, never in them: they may be half replaced.
    regs.slot[arch::kIpSlot] = resume.resume_copy;
  } else {
    SafeMemory memory;
    arch::resume_after_hit(resume.insn, resume.slot, regs, memory);
  }
  arch::store_regs(regs, context);
  return true;
}

bool rewind_removed_breakpoint(ucontext_t& context) noexcept {
  const uint64_t address = arch::probe_address_of_trap(arch::context_pc(context));
  uint8_t bytes[arch::kMaxInsnBytes];
  const size_t size = arch::breakpoint_insn().size();
  // A breakpoint instruction still there (ours, or the program's own, of
  // any immediate) is not a removed one: its trap is the program's.
  if (!arch::safe_read(bytes, address, size) || arch::is_breakpoint_insn({bytes, size})) {
    return false;
  }
  arch::set_context_pc(context, address);
  return true;
}

}  // namespace dprobe::agent

// Called by an optimized probe's trampoline (arch/x86_64/trampoline.cc, arch/arm64/optimize.cc)
// with the registers it saved and the probe's address. No signal: the
// program's thread came here by a jump, and goes on when this returns.
// Flattened: the hit runs as one function, with one prologue, not four.
extern "C" __attribute__((visibility("hidden"), flatten)) DPROBE_HIT_PATH void dprobe_optimized_hit(
    dprobe::arch::SavedRegs* regs, uint64_t address) noexcept {
  using namespace dprobe::agent;
  AgentState& state = agent_state();
  if (!state.registry) return;
  const dprobe::core::ProbeRegistry::Reader reader(*state.registry);
  const dprobe::core::Probe* probe = reader.find(address);
  // Disarmed: a jump that may not become a breakpoint again stays, and
  // calls nothing (Probe::jump_only).
  if (probe == nullptr || !probe->armed.load(std::memory_order_relaxed)) return;
  fill_fixed_slots_if_read(state, *regs);
  on_probe_hit(*probe, *regs, StackInfo::unknown(), state);
}
