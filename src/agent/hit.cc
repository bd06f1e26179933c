// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit.h"

#include "agent/agent_state.h"
#include "agent/return_probes.h"
#include "agent/thread_trace.h"
#include "agent/vdso.h"
#include "arch/runtime/context.h"
#include "arch/runtime/safe_memory.h"
#include "trace/fetch_exec.h"
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

bool read_memory(void*, void* dst, uint64_t src, size_t size) {
  return arch::safe_read(dst, src, size);
}

int64_t read_string(void*, char* dst, uint64_t src, size_t capacity) {
  return arch::safe_read_string(dst, src, capacity);
}

struct HitInfo {
  uint64_t address;
  uint64_t timestamp;
  uint32_t cpu;
};

void record_event(const AgentEvent& event, const HitInfo& hit, const arch::SavedRegs& regs,
                  ThreadTrace& thread, const trace::TraceMemory& memory) noexcept {
  trace::EventCounter& counter = memory.counter(event.desc.id);
  if (counter.disabled.load(std::memory_order_relaxed) != 0) return;
  counter.hits.fetch_add(1, std::memory_order_relaxed);
  if (!thread.has_ring) {
    memory.header().slotless.fetch_add(1, std::memory_order_relaxed);
    counter.misses.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto* record = static_cast<std::byte*>(thread.writer().reserve(event.max_record));
  if (record == nullptr) {
    counter.misses.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const trace::RecordHeader header{event.desc.id, 0,          hit.cpu,
                                   thread.pid,    thread.tid, hit.timestamp};
  __builtin_memcpy(record, &header, sizeof(header));
  trace::store_field<uint64_t>(record, trace::EventDesc::kIpOffset, hit.address);
  const trace::FetchEnv env{regs.slot, arch::host_isa(), nullptr,
                            0,         thread.comm,      {read_memory, read_string, nullptr}};
  const uint32_t size = trace::store_event_args(event.desc, env, record, event.max_record);
  thread.writer().commit(size);
}

// Entry events record now; return events take an instance (a hijacked
// return address) and record when the function returns.
void run_handlers(const core::Probe& probe, const arch::SavedRegs& regs, const StackInfo& stack,
                  ThreadTrace& thread, AgentState& state) noexcept {
  const trace::TraceMemory& memory = *state.memory;
  ensure_ring(thread, memory);
  const HitInfo hit{probe.address, monotonic_ns(), current_cpu()};
  bool has_return_events = false;
  for (uint32_t id : probe.handlers) {
    const AgentEvent* event = state.events.find(id);
    if (event == nullptr) continue;
    if (event->desc.is_return) {
      has_return_events = true;
    } else {
      record_event(*event, hit, regs, thread, memory);
    }
  }
  if (has_return_events) hijack_return(probe, regs, stack, thread, state);
}

void count_misses(const core::Probe& probe, AgentState& state) noexcept {
  for (uint32_t id : probe.handlers) {
    state.memory->counter(id).misses.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

bool handle_breakpoint(ucontext_t& context) noexcept {
  AgentState& state = agent_state();
  if (!state.registry) return false;
  const uint64_t address = arch::probe_address_of_trap(arch::context_pc(context));
  // Holds the probe (and its snapshot) until the program is on its way.
  const core::ProbeRegistry::Reader reader(*state.registry);
  const core::Probe* probe = reader.find(address);
  if (probe == nullptr) return false;
  arch::SavedRegs regs;
  arch::load_regs(context, regs);
  regs.slot[arch::kIpSlot] = address;
  if (probe->internal != nullptr) probe->internal(regs);
  ThreadTrace& thread = current_thread();
  const bool untraced = thread.is_agent || thread.in_agent;
  if (!state.recording.load(std::memory_order_relaxed) || untraced || probe->handlers.empty()) {
    // After fork, once the session is over, or the agent at work: just go on.
  } else if (thread.in_handler) {
    count_misses(*probe, state);  // a probe hit from inside a handler
  } else {
    thread.in_handler = true;
    const auto alt = reinterpret_cast<uint64_t>(context.uc_stack.ss_sp);
    run_handlers(*probe, regs, {alt, alt + context.uc_stack.ss_size}, thread, state);
    thread.in_handler = false;
  }
  SafeMemory memory;
  arch::resume_after_hit(probe->insn, probe->slot, regs, memory);
  arch::store_regs(regs, context);
  return true;
}

bool rewind_removed_breakpoint(ucontext_t& context) noexcept {
  const uint64_t address = arch::probe_address_of_trap(arch::context_pc(context));
  const auto breakpoint = arch::breakpoint_insn();
  uint8_t byte = 0;
  if (!arch::safe_read(&byte, address, 1) || byte == breakpoint[0]) return false;
  arch::set_context_pc(context, address);
  return true;
}

}  // namespace dprobe::agent
