// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Out-of-line slots: near the code they stand for, kSlotBytes apart in
// read+execute pages of their own, a new page when one is full or too far.
#include "core/slot_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "arch/probe_insn.h"

namespace dprobe::core {
namespace {

constexpr uint64_t kSlotPageBytes = 64 * 1024;

struct Mapping {
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string perms;
};

// The /proc/self/maps line holding `address`; an empty mapping if none.
Mapping mapping_of(uint64_t address) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    Mapping m;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s", &m.begin, &m.end, perms) != 3) {
      continue;
    }
    if (address >= m.begin && address < m.end) {
      m.perms = perms;
      return m;
    }
  }
  return {};
}

uint64_t distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

// Some code of this binary, where probes would go.
uint64_t code_address() { return reinterpret_cast<uintptr_t>(&mapping_of); }

uint64_t allocate(SlotAllocator& slots, uint64_t near) {
  auto slot = slots.allocate(near);
  if (!slot) {
    ADD_FAILURE() << slot.error().message;
    return 0;
  }
  return *slot;
}

TEST(SlotAllocator, SlotIsNearTheCodeInAnExecutableReadOnlyMapping) {
  SlotAllocator slots;
  const uint64_t near = code_address();
  const uint64_t slot = allocate(slots, near);
  ASSERT_NE(slot, 0u);
  EXPECT_LT(distance(slot, near), SlotAllocator::kReach);
  EXPECT_LT(distance(slot + arch::kSlotBytes, near), SlotAllocator::kReach);
  EXPECT_EQ(slot % kSlotPageBytes, 0u) << "a fresh page's first slot";
  const Mapping mapping = mapping_of(slot);
  EXPECT_EQ(mapping.perms, "r-xp");
  EXPECT_LE(mapping.begin, slot);
  EXPECT_GE(mapping.end, slot + kSlotPageBytes);
  // Its own page: not the mapping of the code it stands for.
  EXPECT_NE(mapping_of(near).begin, mapping.begin);
  // Fresh, readable, zero.
  const auto* bytes = reinterpret_cast<const uint8_t*>(slot);
  for (size_t i = 0; i < arch::kSlotBytes; ++i) EXPECT_EQ(bytes[i], 0) << i;
}

TEST(SlotAllocator, ConsecutiveSlotsAreSlotBytesApart) {
  SlotAllocator slots;
  const uint64_t near = code_address();
  const uint64_t first = allocate(slots, near);
  for (uint64_t i = 1; i < 100; ++i) {
    ASSERT_EQ(allocate(slots, near + i * 7), first + i * arch::kSlotBytes) << i;
  }
  EXPECT_EQ(arch::kSlotBytes, 32u);
}

TEST(SlotAllocator, ManySlotsSpanSeveralPagesAllInReach) {
  SlotAllocator slots;
  const uint64_t near = code_address();
  constexpr size_t kCount = 3 * (kSlotPageBytes / arch::kSlotBytes) + 17;  // > 3 pages
  std::vector<uint64_t> all;
  std::set<uint64_t> pages;
  for (size_t i = 0; i < kCount; ++i) {
    const uint64_t slot = allocate(slots, near);
    ASSERT_NE(slot, 0u);
    ASSERT_LT(distance(slot, near), SlotAllocator::kReach) << i;
    ASSERT_EQ(slot % arch::kSlotBytes, 0u) << i;
    all.push_back(slot);
    pages.insert(slot & ~(kSlotPageBytes - 1));
  }
  EXPECT_EQ(std::set<uint64_t>(all.begin(), all.end()).size(), kCount) << "slots overlap";
  EXPECT_EQ(pages.size(), 4u);
  // No two slots overlap: sorted, each starts kSlotBytes or more after the last.
  std::vector<uint64_t> sorted(all);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    ASSERT_GE(sorted[i] - sorted[i - 1], arch::kSlotBytes) << i;
  }
  // Within a page, slots fill it in order, the last ending at the page's end.
  for (size_t i = 1; i < kSlotPageBytes / arch::kSlotBytes; ++i) {
    ASSERT_EQ(all[i], all[0] + i * arch::kSlotBytes);
  }
  const uint64_t last_of_first_page = all[kSlotPageBytes / arch::kSlotBytes - 1];
  EXPECT_EQ(last_of_first_page + arch::kSlotBytes, all[0] + kSlotPageBytes);
  for (uint64_t page : pages) {
    const Mapping mapping = mapping_of(page);
    EXPECT_EQ(mapping.perms, "r-xp") << std::hex << page;
    EXPECT_GE(mapping.end, page + kSlotPageBytes);
  }
}

TEST(SlotAllocator, FarApartRequestsGetDifferentPages) {
  SlotAllocator slots;
  const uint64_t near = code_address();
  const uint64_t far = near + (uint64_t{8} << 30);  // 8 GiB away: no page reaches both
  const uint64_t a = allocate(slots, near);
  const uint64_t b = allocate(slots, far);
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  EXPECT_LT(distance(a, near), SlotAllocator::kReach);
  EXPECT_LT(distance(b, far), SlotAllocator::kReach);
  EXPECT_NE(a & ~(kSlotPageBytes - 1), b & ~(kSlotPageBytes - 1));
  EXPECT_EQ(mapping_of(b).perms, "r-xp");
  // Each side keeps using its own page.
  EXPECT_EQ(allocate(slots, near), a + arch::kSlotBytes);
  EXPECT_EQ(allocate(slots, far), b + arch::kSlotBytes);
}

TEST(SlotAllocator, PageOutOfReachIsNotReused) {
  // 1.5 GiB apart: each request is in reach of its own page only.
  SlotAllocator slots;
  const uint64_t near = code_address();
  const uint64_t other = near + (uint64_t{3} << 29);
  const uint64_t a = allocate(slots, near);
  const uint64_t b = allocate(slots, other);
  EXPECT_LT(distance(a, near), SlotAllocator::kReach);
  EXPECT_LT(distance(b, other), SlotAllocator::kReach);
  EXPECT_NE(a & ~(kSlotPageBytes - 1), b & ~(kSlotPageBytes - 1));
}

TEST(SlotAllocator, LowAddressesGetASlotAbove) {
  // Nothing fits below the first page of the address space: the slot goes above.
  SlotAllocator slots;
  const uint64_t near = 0x100000;
  auto slot = slots.allocate(near);
  ASSERT_TRUE(slot) << slot.error().message;
  EXPECT_GT(*slot, near);
  EXPECT_LT(*slot - near, SlotAllocator::kReach);
  EXPECT_EQ(mapping_of(*slot).perms, "r-xp");
}

}  // namespace
}  // namespace dprobe::core
