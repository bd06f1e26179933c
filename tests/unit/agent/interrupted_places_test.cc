// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The table of places running signal handlers return to
// (agent/interrupted_places.h): which ranges a noted place keeps from
// being clear, that a place forgotten keeps none, that a full table keeps
// every range, and that a thread gone from its handler for good (longjmp,
// then exit) keeps nothing. The table is the process's: every test
// forgets what it noted.
#include "agent/interrupted_places.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "unit/agent/gone_thread.h"

namespace dprobe::agent {
namespace {

// The table's room (interrupted_places.cc): the place past it is not noted.
constexpr uint32_t kPlaces = 256;

constexpr uint64_t kPc = 0x401000;

TEST(InterruptedPlaces, NoPlaceNotedKeepsNoRange) {
  EXPECT_FALSE(interrupted_inside(0, UINT64_MAX));
}

// (begin, end): the first byte takes the trap or the jump itself, so a
// handler returning there is fine; the end is the next instruction's.
TEST(InterruptedPlaces, APlaceKeepsTheRangesWhoseBytesPastTheFirstHoldIt) {
  const uint32_t place = note_interrupted(kPc);
  EXPECT_TRUE(interrupted_inside(kPc - 1, kPc + 1));
  EXPECT_TRUE(interrupted_inside(kPc - 16, kPc + 16));
  EXPECT_FALSE(interrupted_inside(kPc, kPc + 16)) << "at the range's first byte";
  EXPECT_FALSE(interrupted_inside(kPc - 16, kPc)) << "at the range's end";
  EXPECT_FALSE(interrupted_inside(kPc + 1, kPc + 16));
  EXPECT_FALSE(interrupted_inside(kPc - 16, kPc - 1));
  forget_interrupted(place);
}

TEST(InterruptedPlaces, APlaceForgottenKeepsNothing) {
  const uint32_t place = note_interrupted(kPc);
  ASSERT_TRUE(interrupted_inside(kPc - 1, kPc + 1));
  forget_interrupted(place);
  EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + 1));
}

TEST(InterruptedPlaces, NestedHandlersAreNotedApartAndForgottenApart) {
  const uint32_t outer = note_interrupted(kPc);
  const uint32_t inner = note_interrupted(kPc + 0x100);
  EXPECT_NE(outer, inner);
  forget_interrupted(inner);
  EXPECT_FALSE(interrupted_inside(kPc + 0xff, kPc + 0x101));
  EXPECT_TRUE(interrupted_inside(kPc - 1, kPc + 1)) << "the outer handler still runs";
  forget_interrupted(outer);
  EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + 1));
}

TEST(InterruptedPlaces, AForgottenPlaceIsTakenAgain) {
  const uint32_t first = note_interrupted(kPc);
  forget_interrupted(first);
  const uint32_t again = note_interrupted(kPc + 8);
  EXPECT_EQ(again, first);
  forget_interrupted(again);
}

// Past the table's room no range is known to be clear: the place that was
// not noted could be anywhere. Once that handler is done, they are again.
TEST(InterruptedPlaces, APlacePastTheTablesRoomKeepsEveryRange) {
  std::vector<uint32_t> places;
  for (uint32_t i = 0; i < kPlaces; ++i) places.push_back(note_interrupted(kPc + i));
  EXPECT_EQ(std::set<uint32_t>(places.begin(), places.end()).size(), kPlaces);
  EXPECT_FALSE(interrupted_inside(0x10, 0x20)) << "every place noted, none there";
  const uint32_t unnoted = note_interrupted(0x18);
  EXPECT_TRUE(interrupted_inside(0x10, 0x20));
  EXPECT_TRUE(interrupted_inside(0x7000, 0x8000));
  forget_interrupted(unnoted);
  EXPECT_FALSE(interrupted_inside(0x10, 0x20));
  EXPECT_FALSE(interrupted_inside(0x7000, 0x8000));
  for (const uint32_t place : places) forget_interrupted(place);
  EXPECT_FALSE(interrupted_inside(0, UINT64_MAX));
}

// A thread that left its handler by longjmp never forgets its place; once
// it has exited, it returns nowhere, and the place is taken back.
TEST(InterruptedPlaces, APlaceOfAThreadThatExitedKeepsNothingAndIsTakenBack) {
  uint32_t gone_place = 0;
  ASSERT_NE(test::run_on_a_thread_gone_after([&] { gone_place = note_interrupted(kPc); }), 0u);
  EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + 1));
  const uint32_t mine = note_interrupted(kPc + 64);
  EXPECT_EQ(mine, gone_place) << "the exited thread's place was not taken back";
  forget_interrupted(mine);
}

TEST(InterruptedPlaces, APlaceOfAThreadThatStillRunsIsKept) {
  std::atomic<bool> noted{false};
  std::atomic<bool> done{false};
  std::thread handler([&] {
    const uint32_t place = note_interrupted(kPc);
    noted.store(true);
    while (!done.load()) std::this_thread::yield();
    forget_interrupted(place);
  });
  while (!noted.load()) std::this_thread::yield();
  EXPECT_TRUE(interrupted_inside(kPc - 1, kPc + 1));
  EXPECT_TRUE(interrupted_inside(kPc - 1, kPc + 1)) << "kept across looks";
  done.store(true);
  handler.join();
  EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + 1));
}

// Handlers on several threads at once, each noting and forgetting in a
// loop: no two hold one place at once, and a place held is always seen.
TEST(InterruptedPlaces, ThreadsNotingAtOnceEachHaveTheirOwnPlace) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 5000;
  std::atomic<uint32_t> owners[kPlaces] = {};
  std::atomic<int> collisions{0};
  std::atomic<int> unseen{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const uint64_t pc = 0x100000 + static_cast<uint64_t>(t) * 0x1000;
      for (int round = 0; round < kRounds; ++round) {
        const uint32_t place = note_interrupted(pc);
        if (place >= kPlaces) {
          collisions.fetch_add(1);  // the table cannot be full with 8
          forget_interrupted(place);
          continue;
        }
        uint32_t free = 0;
        if (!owners[place].compare_exchange_strong(free, static_cast<uint32_t>(t + 1))) {
          collisions.fetch_add(1);
        }
        if (!interrupted_inside(pc - 1, pc + 1)) unseen.fetch_add(1);
        owners[place].store(0);
        forget_interrupted(place);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(collisions.load(), 0);
  EXPECT_EQ(unseen.load(), 0);
  EXPECT_FALSE(interrupted_inside(0, UINT64_MAX));
}

}  // namespace
}  // namespace dprobe::agent
