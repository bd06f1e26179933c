// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/return_instances.h"

#include <gtest/gtest.h>

#include <atomic>
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

TEST(ReturnInstancePool, AnEmptyPoolHandsOutNothing) {
  ReturnInstancePool pool(0);
  EXPECT_FALSE(pool.acquire());
  EXPECT_EQ(pool.used_bound(), 0u);
}

TEST(ReturnInstancePool, AFreshPoolHandsOutTheLowestFirst) {
  ReturnInstancePool pool(3);
  EXPECT_EQ(pool.acquire(), 0u);
  EXPECT_EQ(pool.acquire(), 1u);
  EXPECT_EQ(pool.acquire(), 2u);
  EXPECT_EQ(pool.used_bound(), 3u);
}

// The free list is a stack: what a thread just gave back is what its next
// call takes, still in its cache.
TEST(ReturnInstancePool, TheInstanceReleasedLastIsHandedOutFirst) {
  ReturnInstancePool pool(8);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(pool.acquire());
  pool.release(1);
  pool.release(3);
  EXPECT_EQ(pool.acquire(), 3u);
  EXPECT_EQ(pool.acquire(), 1u);
  EXPECT_EQ(pool.acquire(), 4u) << "then the ones never taken";
  EXPECT_EQ(pool.used_bound(), 5u);
}

// Emptied, given back in any order, emptied again: every instance once.
TEST(ReturnInstancePool, EveryInstanceComesBackOnceAfterAllWereOut) {
  constexpr uint32_t kCount = 64;
  ReturnInstancePool pool(kCount);
  std::vector<uint32_t> out;
  while (auto index = pool.acquire()) out.push_back(*index);
  ASSERT_EQ(out.size(), kCount);
  for (size_t i = 0; i < out.size(); i += 2) pool.release(out[i]);
  for (size_t i = 1; i < out.size(); i += 2) pool.release(out[i]);
  std::set<uint32_t> again;
  while (auto index = pool.acquire()) EXPECT_TRUE(again.insert(*index).second) << *index;
  EXPECT_EQ(again.size(), kCount);
  EXPECT_EQ(pool.used_bound(), kCount);
}

// The return stub finds instance i's return address at data() + i * stride().
TEST(ReturnInstancePool, TheReturnAddressOfInstanceIIsAtDataPlusIStrides) {
  ReturnInstancePool pool(4);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(pool.data() + i * ReturnInstancePool::stride(),
              reinterpret_cast<uint64_t>(&pool.at(i).return_address));
  }
}

// Threads take and give back instances of a small pool at once, as calls
// on several threads do: an instance is never out to two at once, and
// none is lost or doubled in the free list. (The ABA case the tag guards
// against, an index popped, pushed back and popped again between another
// thread's look and its swap, is too narrow a window to be hit here at
// will: without the tag this passes too.)
TEST(ReturnInstancePool, ThreadsAtOnceNeverShareAnInstanceNorLoseOne) {
  constexpr uint32_t kCount = 6;
  constexpr int kThreads = 4;
  constexpr int kRounds = 200000;
  ReturnInstancePool pool(kCount);
  std::atomic<uint32_t> owner[kCount] = {};
  std::atomic<int> shared{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const auto me = static_cast<uint32_t>(t + 1);
      for (int round = 0; round < kRounds; ++round) {
        // Two at once, as a call inside a probed call holds two.
        const auto outer = pool.acquire();
        const auto inner = pool.acquire();
        for (const auto& index : {outer, inner}) {
          if (!index) continue;
          uint32_t none = 0;
          if (!owner[*index].compare_exchange_strong(none, me)) shared.fetch_add(1);
        }
        for (const auto& index : {inner, outer}) {
          if (!index) continue;
          owner[*index].store(0);
          pool.release(*index);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(shared.load(), 0);
  std::set<uint32_t> left;
  while (auto index = pool.acquire()) {
    ASSERT_LT(*index, kCount);
    ASSERT_TRUE(left.insert(*index).second) << "handed out twice: " << *index;
  }
  EXPECT_EQ(left.size(), kCount) << "instances lost";
  EXPECT_LE(pool.used_bound(), kCount);
}

}  // namespace
}  // namespace dprobe::core
