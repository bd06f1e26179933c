// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The trap handler's address -> probe table: every stored address found,
// every other address a miss, including clusters of addresses that all hash
// to one bucket, and address 0 (the empty marker) never found.
#include "core/hit/probe_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/probe.h"

namespace dprobe::core {
namespace {

// Owns the probes a table points at.
struct ProbeSet {
  std::vector<std::unique_ptr<Probe>> owned;
  std::vector<Probe*> pointers;

  Probe* add(uint64_t address) {
    owned.push_back(std::make_unique<Probe>());
    owned.back()->address = address;
    pointers.push_back(owned.back().get());
    return owned.back().get();
  }
};

// The table hashes (address * golden) >> 20 and masks the low bits: every
// multiple of 2^40 lands in bucket 0, whatever the table's capacity. These
// addresses make one long linear-probing chain.
uint64_t same_bucket(uint64_t i) { return i << 40; }

void expect_all_found(const ProbeTable& table, const ProbeSet& set) {
  for (const Probe* probe : set.pointers) {
    ASSERT_EQ(table.find(probe->address), probe) << std::hex << probe->address;
  }
}

TEST(ProbeTable, DefaultTableFindsNothing) {
  const ProbeTable table;
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(0), nullptr);
  EXPECT_EQ(table.find(1), nullptr);
  EXPECT_EQ(table.find(0x401000), nullptr);
  EXPECT_EQ(table.find(~uint64_t{0}), nullptr);
}

TEST(ProbeTable, TableOfNoProbesFindsNothing) {
  const ProbeTable table(std::vector<Probe*>{});
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(0), nullptr);
  EXPECT_EQ(table.find(0x401000), nullptr);
  EXPECT_EQ(table.find(same_bucket(1)), nullptr);
}

TEST(ProbeTable, OneProbe) {
  ProbeSet set;
  const Probe* probe = set.add(0x55555555a123);
  const ProbeTable table(set.pointers);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.find(0x55555555a123), probe);
  EXPECT_EQ(table.find(0x55555555a122), nullptr);
  EXPECT_EQ(table.find(0x55555555a124), nullptr);
  EXPECT_EQ(table.find(0x55555555a123 + (uint64_t{1} << 40)), nullptr);
  EXPECT_EQ(table.find(0), nullptr);
}

TEST(ProbeTable, ThousandProbesInOneBucketChain) {
  ProbeSet set;
  for (uint64_t i = 1; i <= 1000; ++i) set.add(same_bucket(i));
  const ProbeTable table(set.pointers);
  EXPECT_EQ(table.size(), 1000u);
  expect_all_found(table, set);
  // Misses that walk the whole chain before reaching an empty entry.
  for (uint64_t i = 1001; i <= 1100; ++i) EXPECT_EQ(table.find(same_bucket(i)), nullptr) << i;
  EXPECT_EQ(table.find(same_bucket(1) + 1), nullptr);
  EXPECT_EQ(table.find(0), nullptr);
}

TEST(ProbeTable, ThousandProbesWithPageAndInstructionStrides) {
  // Code addresses look alike: same page offsets, neighbouring bytes.
  ProbeSet set;
  const uint64_t base = 0x7f0000000000;
  for (uint64_t i = 0; i < 500; ++i) set.add(base + i * 4096);
  for (uint64_t i = 0; i < 500; ++i) set.add(base + 0x10000000 + i);
  const ProbeTable table(set.pointers);
  EXPECT_EQ(table.size(), 1000u);
  expect_all_found(table, set);
  for (uint64_t i = 0; i < 500; ++i) {
    ASSERT_EQ(table.find(base + i * 4096 + 1), nullptr) << i;
    ASSERT_EQ(table.find(base + i * 4096 + 2048), nullptr) << i;
  }
  EXPECT_EQ(table.find(base + 0x10000000 + 500), nullptr);
  EXPECT_EQ(table.find(base - 1), nullptr);
}

TEST(ProbeTable, HundredThousandProbes) {
  ProbeSet set;
  const uint64_t base = 0x555555554000;
  for (uint64_t i = 0; i < 98000; ++i) set.add(base + i * 3);  // every third byte
  for (uint64_t i = 1; i <= 2000; ++i) set.add(same_bucket(i));
  const ProbeTable table(set.pointers);
  EXPECT_EQ(table.size(), 100000u);
  expect_all_found(table, set);
  for (uint64_t i = 0; i < 98000; ++i) {
    ASSERT_EQ(table.find(base + i * 3 + 1), nullptr) << i;
    ASSERT_EQ(table.find(base + i * 3 + 2), nullptr) << i;
  }
  for (uint64_t i = 2001; i <= 2100; ++i) ASSERT_EQ(table.find(same_bucket(i)), nullptr) << i;
  EXPECT_EQ(table.find(base + 98000 * 3), nullptr);
  EXPECT_EQ(table.find(0), nullptr);
}

TEST(ProbeTable, DistinctProbesAtEveryAddressAreNotConfused) {
  // Each lookup returns the probe of exactly that address, not a neighbour.
  ProbeSet set;
  for (uint64_t i = 1; i <= 64; ++i) set.add(same_bucket(i));
  for (uint64_t i = 1; i <= 64; ++i) set.add(0x1000 + i);
  const ProbeTable table(set.pointers);
  for (const Probe* probe : set.pointers) {
    const Probe* found = table.find(probe->address);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->address, probe->address);
  }
}

// 0 marks an empty entry, so a probe at address 0 cannot be stored: it must
// never be found, and it must not turn misses into hits.
TEST(ProbeTable, AddressZeroIsNeverStored) {
  ProbeSet set;
  set.add(0);
  const Probe* real = set.add(0x401001);  // not in bucket 0
  const ProbeTable table(set.pointers);
  EXPECT_EQ(table.find(0x401001), real);
  EXPECT_EQ(table.find(0), nullptr);
  // A miss whose chain starts in bucket 0, where the zero probe would land.
  EXPECT_EQ(table.find(same_bucket(1)), nullptr);
  EXPECT_EQ(table.find(same_bucket(7)), nullptr);
}

TEST(ProbeTable, AddressZeroAmongACollidingChain) {
  ProbeSet set;
  // The zero probe both inside the chain's insertion order and after it.
  for (uint64_t i = 1; i <= 10; ++i) set.add(same_bucket(i));
  set.add(0);
  for (uint64_t i = 11; i <= 20; ++i) set.add(same_bucket(i));
  set.add(0);
  const ProbeTable table(set.pointers);
  for (uint64_t i = 1; i <= 20; ++i) {
    const Probe* found = table.find(same_bucket(i));
    ASSERT_NE(found, nullptr) << i;
    EXPECT_EQ(found->address, same_bucket(i));
  }
  EXPECT_EQ(table.find(0), nullptr);
  EXPECT_EQ(table.find(same_bucket(21)), nullptr);
}

}  // namespace
}  // namespace dprobe::core
