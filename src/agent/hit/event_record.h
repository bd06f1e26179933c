// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What writing one event's record takes on a hit, entry or return alike:
// room in the thread's ring (or the miss counted, as the kernel's profile
// counts one), and fault-safe reads of the program's memory for the fetch
// programs.
//
//   std::byte* record = reserve_record(event, thread, memory);
//   if (record == nullptr) return;   // counted
//   ... header, ip fields ...
//   thread.writer().commit(store_event_fields(event, regs.slot, nullptr, thread,
//                                             /*faultless=*/false, 0, record));
#ifndef DPROBE_AGENT_EVENT_RECORD_H_
#define DPROBE_AGENT_EVENT_RECORD_H_

#include <cstddef>

#include "agent/agent_state.h"
#include "agent/hit/hit_analysis.h"
#include "agent/hit/thread_trace.h"
#include "agent/hit/vdso.h"
#include "arch/probe_insn.h"
#include "core/hit/return_instances.h"
#include "core/probe.h"
#include "trace/hit/fetch_exec.h"
#include "trace/record.h"
#include "trace/trace_memory.h"

namespace dprobe::agent {

namespace detail {
void count_record_miss(const AgentEvent& event, ThreadTrace& thread,
                       const trace::TraceMemory& memory) noexcept;
}  // namespace detail

// `event.max_record` bytes in the thread's ring, or nullptr with the record
// counted lost: the thread found no ring (every slot taken), or its ring is
// full.
inline std::byte* reserve_record(const AgentEvent& event, ThreadTrace& thread,
                                 const trace::TraceMemory& memory) noexcept {
  std::byte* record = nullptr;
  if (thread.has_ring) [[likely]] {
    record = static_cast<std::byte*>(thread.writer().reserve(event.max_record));
  }
  if (record == nullptr) [[unlikely]] {
    detail::count_record_miss(event, thread, memory);
  }
  return record;
}

// The reader for a probe's fetches (Probe::jump_only: faultless).
inline trace::MemoryReader memory_reader(bool faultless) noexcept;

// The event's argument fields, entry or return: straight from the saved
// registers (and a return's kept arguments) where its plan allows, with no
// fetch environment built (the common hit); by the interpreter otherwise.
// Returns the record's size, 0 when even its fixed part does not fit.
[[gnu::always_inline]] inline uint32_t store_event_fields(
    const AgentEvent& event, const uint64_t* regs, const uint64_t* entry_args,
    const ThreadTrace& thread, bool faultless, uint64_t duration, std::byte* record) noexcept {
  if (event.registers.usable && event.desc.fixed_size <= event.max_record) [[likely]] {
    return trace::store_register_fields(event.registers, event.desc, regs, record, entry_args);
  }
  const uint32_t kept = entry_args != nullptr ? core::kMaxEntryArgs : 0;
  const trace::FetchEnv env{regs,        arch::host_isa(),         entry_args, kept,
                            thread.comm, memory_reader(faultless), duration,   thread.float_retval};
  return trace::store_event_args(event.desc, env, record, event.max_record);
}

// Where and when an entry event happened. The clock is read at most once
// a hit, and only when something keeps the time: a hit that every event
// aggregates or filters out reads no clock (a counter read is a third of
// such a hit's cost in a VM).
struct HitInfo {
  uint64_t address;  // the probed instruction; for a system call, its site
  uint32_t cpu;
  bool faultless;     // the probe's fetches read faultless (memory_reader_for)
  uint64_t time = 0;  // 0 until timestamp() reads the clock

  trace::MemoryReader memory() const noexcept { return memory_reader(faultless); }

  uint64_t timestamp() noexcept {
    if (time == 0) time = record_time();
    return time;
  }
};

// An entry event's record (header, __probe_ip, the arguments fetched from
// `regs`), unless the event is disabled; the hit or the miss counted.
// Inline: an optimized hit runs as one function (hit.cc).
[[gnu::always_inline]] inline void record_entry_event(const AgentEvent& event, HitInfo& hit,
                                                      const arch::SavedRegs& regs,
                                                      ThreadTrace& thread,
                                                      const trace::TraceMemory& memory) noexcept {
  trace::EventCounter& counter = memory.counter(event.desc.id);
  if (counter.disabled.load(std::memory_order_relaxed) != 0) return;
  count_hit(thread, counter, event.desc.id);
  auto* record = reserve_record(event, thread, memory);
  if (record == nullptr) return;
  // Stamped now, as the kernel stamps at its reservation; with a filter or
  // a trigger, once the analysis keeps the record (none read the time).
  const bool analyzed = event.desc.analysis != nullptr;
  const trace::RecordHeader header{event.desc.id, 0,          hit.cpu,
                                   thread.pid,    thread.tid, analyzed ? 0 : hit.timestamp()};
  __builtin_memcpy(record, &header, sizeof(header));
  trace::store_field<uint64_t>(record, trace::EventDesc::kIpOffset, hit.address);
  uint32_t size = store_event_fields(event, regs.slot, nullptr, thread, hit.faultless, 0, record);
  if (analyzed && size != 0) {
    if (!analyze_hit(event, {record, size, regs, 0, hit.memory()}, thread, memory)) {
      return;  // filtered out, or aggregated instead of recorded
    }
    trace::store_field<uint64_t>(record, offsetof(trace::RecordHeader, timestamp), hit.timestamp());
  }
  thread.writer().commit(size);
}

namespace detail {
bool read_memory(void*, void* dst, uint64_t src, size_t size);
int64_t read_string(void*, char* dst, uint64_t src, size_t capacity);
bool read_memory_faultless(void*, void* dst, uint64_t src, size_t size);
int64_t read_string_faultless(void*, char* dst, uint64_t src, size_t capacity);
}  // namespace detail

// arch::safe_read and arch::safe_read_string, for FetchEnv::memory.
inline trace::MemoryReader safe_memory_reader() noexcept {
  return {detail::read_memory, detail::read_string, nullptr};
}

// arch::kernel_read (process_vm_readv), which fails where a safe read
// would fault.
inline trace::MemoryReader faultless_memory_reader() noexcept {
  return {detail::read_memory_faultless, detail::read_string_faultless, nullptr};
}

// A probe that may run with every signal blocked (Probe::jump_only) reads
// faultless: a fault there would kill the process.
inline trace::MemoryReader memory_reader(bool faultless) noexcept {
  return faultless ? faultless_memory_reader() : safe_memory_reader();
}
inline trace::MemoryReader memory_reader_for(const core::Probe& probe) noexcept {
  return memory_reader(probe.jump_only);
}

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_EVENT_RECORD_H_
