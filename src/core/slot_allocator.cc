// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/slot_allocator.h"

#include <sys/mman.h>

#include "arch/probe_insn.h"

namespace dprobe::core {
namespace {

constexpr uint64_t kPageBytes = 64 * 1024;
constexpr uint64_t kStep = 16u << 20;  // how far apart the placement attempts are

uint64_t distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

}  // namespace

SlotAllocator::~SlotAllocator() {
  // Slots stay mapped: a thread may still be running in one when the agent
  // unwinds, and a few pages are not worth that risk.
}

Result<uint64_t> SlotAllocator::allocate(uint64_t near, uint64_t bytes) {
  if (bytes == 0 || bytes > kPageBytes) return fail("no code block of that size");
  for (Page& page : pages_) {
    if (page.used + bytes <= kPageBytes && distance(page.begin, near) < kReach) {
      const uint64_t slot = page.begin + page.used;
      page.used += bytes;
      return slot;
    }
  }
  auto page = map_page_near(near);
  if (!page) return unexpected(page.error());
  const uint64_t slot = (*page)->begin;
  (*page)->used = bytes;
  return slot;
}

// Tries below the code first (between a program and its heap there is room
// on x86_64), then above, in steps, never replacing a mapping.
Result<SlotAllocator::Page*> SlotAllocator::map_page_near(uint64_t near) {
  const uint64_t base = near & ~(kPageBytes - 1);
  for (uint64_t offset = kStep; offset < kReach; offset += kStep) {
    for (const bool below : {true, false}) {
      if (below && base < offset) continue;
      const uint64_t hint = below ? base - offset : base + offset;
      void* page = ::mmap(reinterpret_cast<void*>(hint), kPageBytes, PROT_READ | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (page == MAP_FAILED) continue;
      pages_.push_back({reinterpret_cast<uint64_t>(page), 0});
      return &pages_.back();
    }
  }
  return fail("no free address within reach for an out-of-line slot");
}

}  // namespace dprobe::core
