// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the trap handler reads on every hit: the probe registry, the events
// (their compiled fetch programs), and the shared trace memory. Written once
// at start-up, before any probe is armed; read-only afterwards.
#ifndef DPROBE_AGENT_AGENT_STATE_H_
#define DPROBE_AGENT_AGENT_STATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/hit/return_instances.h"
#include "core/probe_registry.h"
#include "trace/event.h"
#include "trace/hit/fetch_exec.h"
#include "trace/trace_memory.h"

namespace dprobe::agent {

struct AgentEvent {
  trace::EventDesc desc;
  uint32_t max_record = 0;          // fixed part plus room for its strings
  uint32_t maxactive = 0;           // return events: live instances per thread
  uint32_t entry_args = 0;          // return events: $arg1..N to fetch at entry
  trace::RegisterFields registers;  // the fields, where registers alone make them
  bool needs_stack = false;         // --stacktrace, or a hist trigger keyed on the stack
};

// Events by id. Probes name their handlers by event id; an event, once
// added, is never moved or freed, so a trap handler can hold it unlocked.
// One table in the process (the agent's).
class EventTable {
 public:
  constexpr EventTable() = default;
  const AgentEvent* find(uint32_t id) const noexcept {
    return id < kSlots ? events_[id].load(std::memory_order_acquire) : nullptr;
  }
  // Keeps the event (the caller gives it up for good).
  void add(std::unique_ptr<AgentEvent> event) {
    const uint16_t id = event->desc.id;
    events_[id].store(event.release(), std::memory_order_release);
  }

 private:
  static constexpr uint32_t kSlots = 1u << 16;  // event ids are 16-bit
  // Zero-initialized, apart from the state around it: in .bss, not .data.
  static inline constinit std::atomic<const AgentEvent*> slots_[kSlots]{};
  std::atomic<const AgentEvent*>* events_ = slots_;
};

struct AgentState {
  std::optional<core::ProbeRegistry> registry;
  std::mutex registry_writer;  // one writer at a time; readers never lock
  EventTable events;
  std::optional<trace::TraceMemory> memory;
  // False after fork in the child, and after the session ends: probes
  // still resume correctly, but record nothing.
  std::atomic<bool> recording{false};
  // The session wants return records to carry their entry's time.
  std::atomic<bool> entry_times{true};
  // Some event reads a register an optimized probe's trampoline leaves for
  // the hit to fill (arch::fill_fixed_slots): set once, never cleared.
  std::atomic<bool> fixed_slots_read{false};
  // `run`'s first process (protocol::Probes::hold_exit): its pid, whose
  // exit waits for the CLI to write the trace out (exit_hold.h); 0 if none.
  std::atomic<uint32_t> exit_waits_pid{0};
};

namespace detail {
// Built at compile time (nothing runs before a hit can read it) and never
// destroyed: a thread may hit a probe while the process runs its exit
// handlers.
union StateStorage {
  constexpr StateStorage() : state() {}
  ~StateStorage() {}
  AgentState state;
};
extern constinit StateStorage g_state;
}  // namespace detail

inline AgentState& agent_state() { return detail::g_state.state; }

// Fills the slots an optimized probe's trampoline (or the return
// trampoline) left unwritten, once some event reads one.
inline void fill_fixed_slots_if_read(const AgentState& state, arch::SavedRegs& regs) noexcept {
  if (state.fixed_slots_read.load(std::memory_order_relaxed)) [[unlikely]] {
    arch::fill_fixed_slots(regs);
  }
}

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_AGENT_STATE_H_
