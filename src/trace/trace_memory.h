// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The one shared memory block of a tracing session, created by the agent
// and mapped by the CLI: per-event counters (the profile), a table of ring
// slots, and the rings themselves, one per traced thread.
//
//   | header | counters[event_slots] | syscall stats | slot states[slot_count]
//   | ring 0 | ring 1 | ... | hist tables of slot 0 | of slot 1 | ...
//
// The hist tables (--trigger hist:..., trace/hist_table.h) are per slot as
// the rings are: a thread aggregates into its own slot's table of each
// event, with no atomic operation, and the CLI merges the tables at the
// end. A slot's tables outlive its thread: the next owner adds to them.
//
// A thread takes a free slot on its first hit (kFree -> kActive), gives it
// back when it exits (kActive -> kRetired); the CLI drains a retired ring to
// the end before it frees the slot (kRetired -> kFree). Each new owner bumps
// the slot's generation, so the CLI knows to start reading afresh.
//
//   auto layout = TraceMemoryLayout::compute(64, 10, 1 << 20);
//   auto memory = TraceMemory::initialize(shm.data(), shm.size(), layout);
//   memory->counter(3).hits.fetch_add(1, std::memory_order_relaxed);
#ifndef DPROBE_TRACE_TRACE_MEMORY_H_
#define DPROBE_TRACE_TRACE_MEMORY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "base/result.h"
#include "trace/trace_clock.h"

namespace dprobe::trace {

inline constexpr uint32_t kTraceMemoryMagic = 0x454d5244;  // "DRME"
inline constexpr uint32_t kTraceMemoryVersion = 5;

// Where each part of the block is; written into the header whole by the
// side that formats the block, and checked whole by the side that maps it.
struct TraceMemoryLayout {
  uint32_t slot_count = 0;
  uint32_t event_slots = 0;
  uint64_t ring_bytes = 0;  // one ring block, control page included
  uint64_t counters_offset = 0;
  uint64_t syscalls_offset = 0;
  uint64_t slots_offset = 0;
  uint64_t rings_offset = 0;
  uint64_t hists_offset = 0;
  uint64_t hist_slot_bytes = 0;  // one slot's hist tables, every event's
  uint64_t total_bytes = 0;

  bool operator==(const TraceMemoryLayout&) const = default;

  // `hist_bytes`: the hist tables one slot needs, every event's together.
  static TraceMemoryLayout compute(uint32_t slot_count, uint32_t event_slots,
                                   uint64_t ring_data_bytes, uint64_t hist_bytes = 0);
};

struct TraceMemoryHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t clock;  // a ClockKind (trace/trace_clock.h): what the records' timestamps count
  // The program's own prctl(PR_SET_SYSCALL_USER_DISPATCH) calls the agent
  // refused (EBUSY) while it traced system calls: two dispatchers cannot
  // share a thread. Counted with __atomic builtins.
  uint32_t dispatch_refused;
  TraceMemoryLayout layout;
  // Hits that found every ring slot taken: lost, and counted here.
  alignas(64) std::atomic<uint64_t> slotless;
};

// Per event: hits, and misses (a nested hit whose handler could not run,
// or a record that found its ring full), as the kernel's kprobe_profile;
// hits its filter (--filter) turned away, which are neither; and whether
// the CLI has disabled it (zero, as fresh memory, is enabled).
struct EventCounter {
  std::atomic<uint64_t> hits;
  std::atomic<uint64_t> misses;
  std::atomic<uint64_t> filtered;
  std::atomic<uint32_t> disabled;
};

// Per system call number, for --summary (the strace -c table): counted by
// every thread of the process, read by the CLI at the end.
struct SyscallStats {
  std::atomic<uint64_t> calls;
  std::atomic<uint64_t> errors;
  std::atomic<uint64_t> total_ns;
};
inline constexpr uint32_t kSyscallStatsCount = 1024;  // above every number of both ISAs

// A slot's life: Free -> Claiming (its ring being formatted) -> Active ->
// Retired (its thread has exited; the reader drains it) -> Free. Checking:
// an Active slot one thread of the agent holds while it decides whether
// the slot's thread has exited, to retire the slot or take its ring over;
// the reader reads it as Active.
enum SlotStateValue : uint32_t {
  kSlotFree = 0,
  kSlotClaiming,
  kSlotActive,
  kSlotRetired,
  kSlotChecking,
};

struct SlotState {
  std::atomic<uint32_t> state;
  std::atomic<uint32_t> generation;
};

// A view over the mapped block; it owns nothing.
class TraceMemory {
 public:
  static Result<TraceMemory> initialize(void* memory, size_t size, const TraceMemoryLayout& layout);
  // Checks a block the other side formatted; trusts nothing in it.
  static Result<TraceMemory> attach(void* memory, size_t size);

  TraceMemoryHeader& header() const { return *header_; }
  // The layout as it was when checked: the other side may scribble over the
  // header later (the traced program can write it), so no size or offset
  // is read from it again.
  uint32_t slot_count() const { return slot_count_; }
  uint32_t event_slots() const { return event_slots_; }
  // What the records' timestamps count; an unknown value is taken as
  // CLOCK_MONOTONIC (the header is the other side's to write).
  ClockKind clock() const {
    return header_->clock == static_cast<uint32_t>(ClockKind::kCycles) ? ClockKind::kCycles
                                                                       : ClockKind::kMonotonic;
  }
  uint64_t ring_bytes() const { return ring_bytes_; }

  EventCounter& counter(uint32_t event_id) const { return counters_[event_id]; }
  // nr < kSyscallStatsCount.
  SyscallStats& syscall_stats(uint32_t nr) const { return syscalls_[nr]; }
  SlotState& slot(uint32_t index) const { return slots_[index]; }
  void* ring(uint32_t index) const { return rings_ + index * ring_bytes_; }
  // Slot `index`'s hist tables (hist_slot_bytes() of them); an event's
  // table is at its EventAnalysis::hist_offset in them.
  std::byte* hist_tables(uint32_t index) const { return hists_ + index * hist_slot_bytes_; }
  uint64_t hist_slot_bytes() const { return hist_slot_bytes_; }

 private:
  TraceMemory(void* memory, const TraceMemoryLayout& layout);
  std::byte* base_;
  TraceMemoryHeader* header_;
  EventCounter* counters_;
  SyscallStats* syscalls_;
  SlotState* slots_;
  std::byte* rings_;
  std::byte* hists_;
  uint32_t slot_count_;
  uint32_t event_slots_;
  uint64_t ring_bytes_;
  uint64_t hist_slot_bytes_;
};

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_TRACE_MEMORY_H_
