// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/event_record.h"

#include "arch/runtime/safe_memory.h"

namespace dprobe::agent {
namespace {

bool read_memory(void*, void* dst, uint64_t src, size_t size) {
  return arch::safe_read(dst, src, size);
}

int64_t read_string(void*, char* dst, uint64_t src, size_t capacity) {
  return arch::safe_read_string(dst, src, capacity);
}

}  // namespace

std::byte* reserve_record(const AgentEvent& event, ThreadTrace& thread,
                          const trace::TraceMemory& memory) noexcept {
  trace::EventCounter& counter = memory.counter(event.desc.id);
  if (!thread.has_ring) {
    memory.header().slotless.fetch_add(1, std::memory_order_relaxed);
    counter.misses.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  auto* record = static_cast<std::byte*>(thread.writer().reserve(event.max_record));
  if (record == nullptr) count_ring_full(thread, counter, event.desc.id);
  return record;
}

trace::MemoryReader safe_memory_reader() noexcept { return {read_memory, read_string, nullptr}; }

}  // namespace dprobe::agent
