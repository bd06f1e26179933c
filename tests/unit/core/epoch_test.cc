// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/epoch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

namespace dprobe::core {
namespace {

struct Tracked {
  explicit Tracked(int& alive) : alive_(alive) { ++alive_; }
  ~Tracked() { --alive_; }
  int& alive_;
};

TEST(Epoch, WithNoReaderARetiredObjectGoesWithinTwoReclaims) {
  EpochDomain domain;
  int alive = 0;
  domain.retire(std::make_unique<Tracked>(alive));
  EXPECT_EQ(alive, 1);
  domain.reclaim();
  domain.reclaim();
  EXPECT_EQ(alive, 0);
}

TEST(Epoch, AReaderKeepsWhatWasRetiredWhileItRead) {
  EpochDomain domain;
  int alive = 0;
  {
    EpochReader reader(domain);
    domain.retire(std::make_unique<Tracked>(alive));
    for (int i = 0; i < 5; ++i) domain.reclaim();
    EXPECT_EQ(alive, 1);
  }
  domain.reclaim();
  domain.reclaim();
  EXPECT_EQ(alive, 0);
}

TEST(Epoch, ReadersThatStartAfterTheRetirementDoNotHoldItBack) {
  EpochDomain domain;
  int alive = 0;
  domain.retire(std::make_unique<Tracked>(alive));
  domain.reclaim();  // flips: new readers count on the other side
  EpochReader late(domain);
  domain.reclaim();
  EXPECT_EQ(alive, 0);
}

// Readers on several threads while a writer replaces and frees what they
// read: a freed int is poisoned first, so a reader that still saw it would
// notice.
void run_concurrent_readers(EpochDomain& domain, int threads) {
  std::atomic<const int*> published{new int(1)};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < threads; ++t) {
    readers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        EpochReader guard(domain);
        const int* value = published.load(std::memory_order_acquire);
        if (*value <= 0) bad.fetch_add(1);
        EpochReader nested(domain);  // as a signal handler's hit inside a hit
        if (*value <= 0) bad.fetch_add(1);
      }
    });
  }
  struct Poisoned {
    const int* value = nullptr;
    ~Poisoned() {
      *const_cast<int*>(value) = -1;
      delete value;
    }
  };
  for (int i = 2; i < 20000; ++i) {
    auto poisoned = std::make_unique<Poisoned>();
    poisoned->value = published.exchange(new int(i));
    domain.retire(std::move(poisoned));
    domain.reclaim();
  }
  stop = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_TRUE(domain.synchronize());
  delete published.load();
}

TEST(Epoch, ConcurrentFencingReadersNeverSeeAFreedObject) {
  EpochDomain domain;
  run_concurrent_readers(domain, 3);
}

TEST(Epoch, ConcurrentReadersUnderMembarrierNeverSeeAFreedObject) {
  EpochDomain domain;
  if (!domain.use_process_barrier()) GTEST_SKIP() << "no expedited membarrier here";
  run_concurrent_readers(domain, 3);
}

TEST(Epoch, ASignalHandlersNestedReaderKeepsTheOuterOnesHold) {
  EpochDomain domain;
  int alive = 0;
  {
    EpochReader outer(domain);
    domain.retire(std::make_unique<Tracked>(alive));
    { EpochReader nested(domain); }
    for (int i = 0; i < 5; ++i) domain.reclaim();
    EXPECT_EQ(alive, 1);
  }
  domain.reclaim();
  domain.reclaim();
  EXPECT_EQ(alive, 0);
}

TEST(Epoch, SynchronizeWaitsForAReaderOnAnotherThread) {
  EpochDomain domain;
  std::atomic<bool> inside{false};
  std::atomic<bool> leave{false};
  std::thread reader([&] {
    EpochReader guard(domain);
    inside = true;
    while (!leave.load()) std::this_thread::yield();
  });
  while (!inside.load()) std::this_thread::yield();
  EXPECT_FALSE(domain.synchronize(std::chrono::milliseconds(20)));
  leave = true;
  reader.join();
  EXPECT_TRUE(domain.synchronize());
}

// Freeing may be slow (the agent's free() is itself probed while probes
// are breakpoints): what the flips free is freed after the wait, never
// inside its time limit. (Freeing inside it failed every wait of an
// attach with all of libc probed on a loaded machine.)
struct SlowToFree {
  explicit SlowToFree(int& freed) : freed_(freed) {}
  ~SlowToFree() {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ++freed_;
  }
  int& freed_;
};

TEST(Epoch, SynchronizeFreesWhatItFreesOutsideItsTimeLimit) {
  EpochDomain domain;
  int freed = 0;
  for (int i = 0; i < 3; ++i) domain.retire(std::make_unique<SlowToFree>(freed));
  domain.reclaim();  // retired before a flip: the next flip frees them
  EXPECT_TRUE(domain.synchronize(std::chrono::milliseconds(20)));
  EXPECT_EQ(freed, 3);
}

TEST(Epoch, EachThreadTakesASlotOfItsOwnAndAGoneThreadsSlotIsReaped) {
  EpochDomain domain;
  { EpochReader reader(domain); }
  std::thread([&] { EpochReader reader(domain); }).join();
  EXPECT_EQ(domain.owned_slots(), 2u);
  const auto main_tid = static_cast<uint32_t>(::gettid());
  static uint32_t s_main_tid;
  s_main_tid = main_tid;
  domain.reap([](uint32_t tid) { return tid == s_main_tid; });
  EXPECT_EQ(domain.owned_slots(), 1u);
}

TEST(Epoch, AfterForkTheSlotsStartFreeAndAReaderAcrossItLeavesCleanly) {
  EpochDomain domain;
  int alive = 0;
  {
    EpochReader across(domain);
    domain.forked();
    EXPECT_EQ(domain.owned_slots(), 0u);
    domain.retire(std::make_unique<Tracked>(alive));
  }
  { EpochReader again(domain); }
  EXPECT_EQ(domain.owned_slots(), 1u);
  domain.reclaim();
  domain.reclaim();
  EXPECT_EQ(alive, 0);
}

}  // namespace
}  // namespace dprobe::core
