// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/return_instances.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace dprobe::core {
namespace {

TEST(ReturnInstancePool, HandsOutEachInstanceOnceUntilReleased) {
  ReturnInstancePool pool(4);
  std::set<uint32_t> taken;
  for (int i = 0; i < 4; ++i) {
    const auto index = pool.acquire();
    ASSERT_TRUE(index);
    EXPECT_TRUE(taken.insert(*index).second) << *index;
  }
  EXPECT_FALSE(pool.acquire()) << "all four are out";
  pool.release(2);
  EXPECT_EQ(pool.acquire(), 2u);
}

// A sweep of exited threads' instances looks below used_bound() only: it
// must cover every instance ever taken, and stay low while few are live at
// once, however many calls take and give them back.
TEST(ReturnInstancePool, UsedBoundCoversWhatWasTakenAndStaysAtTheMostLiveAtOnce) {
  ReturnInstancePool pool(32768);
  EXPECT_EQ(pool.used_bound(), 0u);
  for (int call = 0; call < 10000; ++call) {
    const auto outer = pool.acquire();
    const auto inner = pool.acquire();
    ASSERT_TRUE(outer && inner);
    EXPECT_LT(*outer, pool.used_bound());
    EXPECT_LT(*inner, pool.used_bound());
    pool.release(*inner);
    pool.release(*outer);
  }
  EXPECT_EQ(pool.used_bound(), 2u);
}

TEST(ReturnInstancePool, UsedBoundCoversWhatThreadsTookAtOnce) {
  ReturnInstancePool pool(1024);
  std::vector<std::vector<uint32_t>> held(4);
  std::vector<std::thread> threads;
  for (auto& mine : held) {
    threads.emplace_back([&pool, &mine] {
      for (int i = 0; i < 100; ++i) {
        if (auto index = pool.acquire()) mine.push_back(*index);
      }
    });
  }
  for (auto& t : threads) t.join();
  uint32_t highest = 0;
  size_t count = 0;
  for (const auto& mine : held) {
    count += mine.size();
    for (uint32_t index : mine) highest = std::max(highest, index);
  }
  EXPECT_EQ(count, 400u);
  EXPECT_EQ(pool.used_bound(), highest + 1);
}

}  // namespace
}  // namespace dprobe::core
