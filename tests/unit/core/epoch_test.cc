// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/epoch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

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

TEST(Epoch, ConcurrentReadersNeverSeeAFreedObject) {
  EpochDomain domain;
  std::atomic<const int*> published{new int(1)};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0};
  std::thread reader([&] {
    while (!stop.load()) {
      EpochReader guard(domain);
      const int* value = published.load();
      if (*value <= 0) bad.fetch_add(1);
    }
  });
  for (int i = 2; i < 20000; ++i) {
    const int* old = published.exchange(new int(i));
    // A freed int is poisoned first: a reader that still saw it would notice.
    struct Poisoned {
      const int* value = nullptr;
      ~Poisoned() {
        *const_cast<int*>(value) = -1;
        delete value;
      }
    };
    auto poisoned = std::make_unique<Poisoned>();
    poisoned->value = old;
    domain.retire(std::move(poisoned));
    domain.reclaim();
  }
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0u);
  delete published.load();
}

}  // namespace
}  // namespace dprobe::core
