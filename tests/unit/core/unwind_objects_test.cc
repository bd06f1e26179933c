// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The unwinder's table of objects (core/unwind_objects.h): found by any pc
// of their text, never overlapping, bounded, replaced by assign.
#include "core/hit/unwind_objects.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "unit/core/unwind_test_fixture.h"

namespace dprobe::core {
namespace {

TEST(UnwindObjectsTest, AddFindRemove) {
  auto objects = std::make_unique<UnwindObjects>();
  EXPECT_TRUE(objects->add(object_at(0x3000, 0x4000)));
  EXPECT_TRUE(objects->add(object_at(0x1000, 0x2000)));
  EXPECT_TRUE(objects->add(object_at(0x5000, 0x6000)));
  EXPECT_FALSE(objects->add(object_at(0x3800, 0x5000)));  // overlaps
  EXPECT_FALSE(objects->add(object_at(0x2000, 0x3001)));
  EXPECT_FALSE(objects->add(object_at(0x7000, 0x7000)));  // empty
  EXPECT_EQ(objects->size(), 3u);
  UnwindObject found;
  ASSERT_TRUE(objects->find(0x3fff, found));
  EXPECT_EQ(found, object_at(0x3000, 0x4000));
  EXPECT_TRUE(objects->find(0x1000, found));
  EXPECT_FALSE(objects->find(0x2000, found));
  EXPECT_FALSE(objects->find(0xfff, found));
  EXPECT_FALSE(objects->find(0x6000, found));
  EXPECT_TRUE(objects->remove(0x3000));
  EXPECT_FALSE(objects->remove(0x3000));
  EXPECT_FALSE(objects->find(0x3800, found));
  EXPECT_TRUE(objects->find(0x5800, found));
  EXPECT_EQ(found, object_at(0x5000, 0x6000));
}

TEST(UnwindObjectsTest, CapacityIsABound) {
  auto objects = std::make_unique<UnwindObjects>();
  for (uint64_t i = 0; i < UnwindObjects::kCapacity; ++i) {
    ASSERT_TRUE(objects->add(object_at(0x10000 + i * 0x100, 0x10080 + i * 0x100)));
  }
  EXPECT_FALSE(objects->add(object_at(0x1000, 0x2000)));
  UnwindObject found;
  EXPECT_TRUE(objects->find(0x10000 + 777 * 0x100 + 0x7f, found));
  EXPECT_EQ(found.text_begin, 0x10000 + 777 * 0x100u);
  EXPECT_FALSE(objects->find(0x10000 + 777 * 0x100 + 0x80, found));
}

TEST(UnwindObjectsTest, AssignKeepsWhatStaysAndReplacesTheRest) {
  auto objects = std::make_unique<UnwindObjects>();
  objects->add(object_at(0x1000, 0x2000));
  objects->add(object_at(0x3000, 0x4000));
  UnwindObject moved = object_at(0x3000, 0x4800);  // another object at the same place
  const std::vector<UnwindObject> now = {object_at(0x5000, 0x6000), moved};
  objects->assign(now);
  EXPECT_EQ(objects->size(), 2u);
  UnwindObject found;
  EXPECT_FALSE(objects->find(0x1000, found));
  ASSERT_TRUE(objects->find(0x4400, found));
  EXPECT_EQ(found, moved);
  EXPECT_TRUE(objects->find(0x5000, found));
}
}  // namespace
}  // namespace dprobe::core
