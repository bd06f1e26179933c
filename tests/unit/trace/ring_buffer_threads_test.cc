// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The ring buffer across threads and processes: ten million records
// without a gap or a duplicate, every dropped record accounted for, and a
// child process writing into the memfd its parent drains.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "support/patience.h"
#include "trace/hit/ring_buffer.h"
#include "trace/shared_memory.h"
#include "unit/trace/ring_block.h"

namespace dprobe::trace {
namespace {

using namespace test_support;

// The record the threaded tests send: its size and trailer follow from seq.
uint32_t threaded_size(uint64_t seq) { return 32 + static_cast<uint32_t>(seq % 41); }

bool write_numbered(RingWriter& writer, uint64_t seq) {
  const uint32_t size = threaded_size(seq);
  auto* slot = static_cast<std::byte*>(writer.reserve(size));
  if (slot == nullptr) return false;
  const RecordHeader header{kEventType, static_cast<uint16_t>(size), 0, 1, 2, seq};
  std::memcpy(slot, &header, sizeof(header));
  store_field<uint64_t>(slot, size - 8, ~seq);
  writer.commit();
  return true;
}

// Checks each record follows the last: in order, no duplicate, and, when
// the producer never drops, no gap.
struct SequenceChecker {
  uint64_t next = 0;
  uint64_t delivered = 0;
  uint64_t gaps = 0;
  uint64_t bad = 0;
  void check(const RecordHeader* header, std::span<const std::byte> record) {
    const uint64_t seq = header->timestamp;
    if (seq < next || record.size() != threaded_size(seq) ||
        load_field<uint64_t>(record.data(), static_cast<uint32_t>(record.size() - 8)) != ~seq) {
      ++bad;
      return;
    }
    gaps += seq - next;
    next = seq + 1;
    ++delivered;
  }
};

// Drains until the producer is done; gives up, and tells the producer to,
// when the reader finds corruption or six patience()s pass (a minute on an
// idle machine), so a broken ring fails the test instead of hanging it.
struct Consumer {
  RingReader reader;
  SequenceChecker checker;
  std::atomic<bool> producer_done{false};
  std::atomic<bool> gave_up{false};

  explicit Consumer(const RingBuffer& ring) : reader(ring) {}
  void drain() {
    reader.drain([&](const RecordHeader* h, std::span<const std::byte> r) { checker.check(h, r); });
  }
  void run(const std::function<bool()>& producer_running) {
    const auto deadline = std::chrono::steady_clock::now() + support::patience(6);
    while (producer_running() && !reader.corrupt()) {
      drain();
      if (std::chrono::steady_clock::now() > deadline) break;
    }
    gave_up.store(producer_running(), std::memory_order_release);
    drain();  // what was committed just before the producer finished
  }
};

TEST(RingBuffer, ThreadsMoveTenMillionRecordsWithoutGapOrDuplicate) {
  constexpr uint64_t kRecords = 10'000'000;
  Block block(1 << 16);
  auto ring = make_ring(block);
  Consumer consumer(ring);
  uint64_t full = 0;
  std::thread producer([&] {
    RingWriter writer(ring);
    for (uint64_t seq = 0; seq < kRecords; ++seq) {
      while (!write_numbered(writer, seq)) {
        ++full;  // each refusal is one lost
        if (consumer.gave_up.load(std::memory_order_acquire)) break;
        std::this_thread::yield();
      }
    }
    consumer.producer_done.store(true, std::memory_order_release);
  });
  consumer.run([&] { return !consumer.producer_done.load(std::memory_order_acquire); });
  producer.join();
  EXPECT_FALSE(consumer.gave_up);
  EXPECT_FALSE(consumer.reader.corrupt()) << consumer.reader.corruption();
  EXPECT_EQ(consumer.checker.bad, 0u);
  EXPECT_EQ(consumer.checker.gaps, 0u);
  EXPECT_EQ(consumer.checker.delivered, kRecords);
  EXPECT_EQ(consumer.reader.written(), kRecords);
  EXPECT_EQ(consumer.reader.lost(), full);
}

TEST(RingBuffer, ThreadsAccountForEveryDroppedRecord) {
  constexpr uint64_t kRecords = 2'000'000;
  Block block(1 << 12);  // small, so that the producer outruns the consumer
  auto ring = make_ring(block);
  Consumer consumer(ring);
  uint64_t dropped = 0;
  std::thread producer([&] {
    RingWriter writer(ring);
    for (uint64_t seq = 0; seq < kRecords; ++seq) dropped += !write_numbered(writer, seq);
    consumer.producer_done.store(true, std::memory_order_release);
  });
  consumer.run([&] { return !consumer.producer_done.load(std::memory_order_acquire); });
  producer.join();
  const SequenceChecker& checker = consumer.checker;
  const RingReader& reader = consumer.reader;
  EXPECT_FALSE(reader.corrupt()) << reader.corruption();
  EXPECT_EQ(checker.bad, 0u);
  EXPECT_EQ(reader.lost(), dropped);
  // Every sequence number was delivered or lost, none both: the lost ones
  // are the gaps, and the tail after the last delivered.
  EXPECT_EQ(checker.gaps + (kRecords - checker.next), reader.lost());
  EXPECT_EQ(checker.delivered + reader.lost(), kRecords);
  EXPECT_EQ(reader.written(), checker.delivered);
}

TEST(RingBuffer, ChildProcessWritesAndParentDrainsThroughTheSameMemfd) {
  constexpr uint64_t kRecords = 200'000;
  auto shm = SharedMemory::create("dprobe-ring-test", ring_bytes_for(1 << 14));
  ASSERT_TRUE(shm) << shm.error().message;
  ASSERT_TRUE(RingBuffer::initialize(shm->data(), shm->size(), 0, 0, "child"));
  auto peer = SharedMemory::map(shm->fd());  // the parent's own mapping
  ASSERT_TRUE(peer) << peer.error().message;
  ASSERT_NE(peer->data(), shm->data());
  auto seen = RingBuffer::attach(peer->data(), peer->size());
  ASSERT_TRUE(seen) << seen.error().message;

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto ring = RingBuffer::attach(shm->data(), shm->size());
    if (!ring) _exit(2);
    RingWriter writer(*ring);
    for (uint64_t seq = 0; seq < kRecords; ++seq) {
      while (!write_numbered(writer, seq)) sched_yield();
    }
    _exit(0);
  }
  Consumer consumer(*seen);
  int status = 0;
  pid_t exited = 0;
  consumer.run([&] {
    if (exited == 0) exited = waitpid(child, &status, WNOHANG);
    return exited == 0;
  });
  if (consumer.gave_up) {
    kill(child, SIGKILL);
    exited = waitpid(child, &status, 0);
  }
  const SequenceChecker& checker = consumer.checker;
  const RingReader& reader = consumer.reader;
  EXPECT_FALSE(consumer.gave_up);
  ASSERT_EQ(exited, child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(reader.corrupt()) << reader.corruption();
  EXPECT_EQ(checker.bad, 0u);
  EXPECT_EQ(checker.gaps, 0u);
  EXPECT_EQ(checker.delivered, kRecords);
  EXPECT_EQ(reader.written(), kRecords);
}
}  // namespace
}  // namespace dprobe::trace
