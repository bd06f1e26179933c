// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/trace_memory.h"

#include <cstddef>
#include <cstring>
#include <new>

#include "trace/hit/ring_buffer.h"

namespace dprobe::trace {
namespace {

constexpr uint64_t kPage = 4096;

constexpr uint64_t page_align(uint64_t n) { return (n + kPage - 1) & ~(kPage - 1); }

}  // namespace

TraceMemoryLayout TraceMemoryLayout::compute(uint32_t slot_count, uint32_t event_slots,
                                             uint64_t ring_data_bytes, uint64_t hist_bytes) {
  TraceMemoryLayout layout;
  layout.slot_count = slot_count;
  layout.event_slots = event_slots;
  layout.ring_bytes = ring_bytes_for(ring_data_bytes);
  layout.counters_offset = page_align(sizeof(TraceMemoryHeader));
  layout.syscalls_offset =
      page_align(layout.counters_offset + uint64_t{event_slots} * sizeof(EventCounter));
  layout.slots_offset =
      page_align(layout.syscalls_offset + uint64_t{kSyscallStatsCount} * sizeof(SyscallStats));
  layout.rings_offset = page_align(layout.slots_offset + uint64_t{slot_count} * sizeof(SlotState));
  layout.hists_offset = layout.rings_offset + uint64_t{slot_count} * layout.ring_bytes;
  layout.hist_slot_bytes = page_align(hist_bytes);
  layout.total_bytes = layout.hists_offset + uint64_t{slot_count} * layout.hist_slot_bytes;
  return layout;
}

TraceMemory::TraceMemory(void* memory, const TraceMemoryLayout& layout)
    : base_(static_cast<std::byte*>(memory)),
      header_(static_cast<TraceMemoryHeader*>(memory)),
      counters_(reinterpret_cast<EventCounter*>(base_ + layout.counters_offset)),
      syscalls_(reinterpret_cast<SyscallStats*>(base_ + layout.syscalls_offset)),
      slots_(reinterpret_cast<SlotState*>(base_ + layout.slots_offset)),
      rings_(base_ + layout.rings_offset),
      hists_(base_ + layout.hists_offset),
      slot_count_(layout.slot_count),
      event_slots_(layout.event_slots),
      ring_bytes_(layout.ring_bytes),
      hist_slot_bytes_(layout.hist_slot_bytes) {}

Result<TraceMemory> TraceMemory::initialize(void* memory, size_t size,
                                            const TraceMemoryLayout& layout) {
  if (size < layout.total_bytes) return fail("trace memory too small for its layout");
  // Every counter starts at 0, enabled, and every slot free.
  std::memset(static_cast<std::byte*>(memory) + layout.counters_offset, 0,
              layout.rings_offset - layout.counters_offset);
  auto* header = new (memory) TraceMemoryHeader{};
  header->version = kTraceMemoryVersion;
  header->layout = layout;
  header->magic = kTraceMemoryMagic;
  return TraceMemory(memory, layout);
}

Result<TraceMemory> TraceMemory::attach(void* memory, size_t size) {
  if (size < sizeof(TraceMemoryHeader)) return fail("trace memory too small");
  // One copy of the header, checked and then used: the other side could
  // change the shared one between a check and a use.
  TraceMemoryHeader copy;
  std::memcpy(static_cast<void*>(&copy), memory, offsetof(TraceMemoryHeader, slotless));
  if (copy.magic != kTraceMemoryMagic || copy.version != kTraceMemoryVersion) {
    return fail("trace memory has a bad magic or version");
  }
  const TraceMemoryLayout& claimed = copy.layout;
  // Sizes are checked against the block before any arithmetic on them, so
  // that a hostile header cannot wrap the layout around to look small.
  const bool sizes_fit =
      claimed.ring_bytes > kRingControlBytes && claimed.rings_offset <= size &&
      (claimed.slot_count == 0 ||
       (claimed.ring_bytes <= (size - claimed.rings_offset) / claimed.slot_count &&
        claimed.hist_slot_bytes <= size / claimed.slot_count));
  if (!sizes_fit) return fail("trace memory layout is inconsistent with the block");
  // Every offset must be the one the counts give: the whole layout again.
  const TraceMemoryLayout expected =
      TraceMemoryLayout::compute(claimed.slot_count, claimed.event_slots,
                                 claimed.ring_bytes - kRingControlBytes, claimed.hist_slot_bytes);
  if (expected != claimed || claimed.total_bytes > size) {
    return fail("trace memory layout is inconsistent");
  }
  return TraceMemory(memory, expected);
}

}  // namespace dprobe::trace
