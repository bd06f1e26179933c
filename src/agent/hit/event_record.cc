// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit/event_record.h"

#include <algorithm>
#include <cstddef>

#include "agent/hit/hit_analysis.h"
#include "arch/runtime/safe_memory.h"
#include "base/hit_path.h"
#include "trace/record.h"

namespace dprobe::agent {

DPROBE_HIT_PATH bool detail::read_memory(void*, void* dst, uint64_t src, size_t size) {
  return arch::safe_read(dst, src, size);
}

DPROBE_HIT_PATH int64_t detail::read_string(void*, char* dst, uint64_t src, size_t capacity) {
  return arch::safe_read_string(dst, src, capacity);
}

DPROBE_HIT_PATH bool detail::read_memory_faultless(void*, void* dst, uint64_t src, size_t size) {
  return arch::kernel_read(dst, src, size);
}

// A page at a time (a read that crosses into an unmapped page fails whole),
// up to the NUL; as arch::safe_read_string otherwise.
DPROBE_HIT_PATH int64_t detail::read_string_faultless(void*, char* dst, uint64_t src,
                                                      size_t capacity) {
  constexpr uint64_t kPage = 4096;
  if (capacity == 0) return 0;
  size_t done = 0;
  while (done < capacity - 1) {
    const uint64_t at = src + done;
    const size_t chunk = std::min<size_t>(capacity - 1 - done, kPage - (at % kPage));
    if (!arch::kernel_read(dst + done, at, chunk)) return -1;
    for (size_t i = done; i < done + chunk; ++i) {
      if (dst[i] == '\0') return static_cast<int64_t>(i + 1);
    }
    done += chunk;
  }
  dst[capacity - 1] = '\0';
  return static_cast<int64_t>(capacity);
}

// A record that found no room: the hit was counted (its handler ran), and
// the record is counted lost, by the ring (RingWriter::reserve) or, for a
// thread that found no ring, here. The profile's misses are the kernel's:
// hits whose handler did not run (recursion, no return instance), so hits
// and misses add up to the calls.
DPROBE_HIT_PATH void detail::count_record_miss(const AgentEvent&, ThreadTrace& thread,
                                               const trace::TraceMemory& memory) noexcept {
  if (!thread.has_ring) memory.header().slotless.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace dprobe::agent
