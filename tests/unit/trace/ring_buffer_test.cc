// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The ring buffer on one thread: formatting and attaching, records of every
// size round-tripped across wraps, padding, every lost record counted, and
// a reader that reports a corrupt ring instead of following it. Threads
// and processes: ring_buffer_threads_test.cc.
#include "trace/hit/ring_buffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "trace/shared_memory.h"
#include "unit/trace/ring_block.h"

namespace dprobe::trace {
namespace {

using namespace test_support;
using ::testing::HasSubstr;

std::byte payload_byte(uint64_t seq, uint32_t i) {
  return static_cast<std::byte>(static_cast<uint8_t>(seq * 31 + i));
}

// A record whose every byte follows from its sequence number and size.
std::vector<std::byte> make_record(uint64_t seq, uint32_t size) {
  std::vector<std::byte> record(size);
  const RecordHeader header{kEventType, static_cast<uint16_t>(size), 3, 100, 101, seq};
  std::memcpy(record.data(), &header, sizeof(header));
  for (uint32_t i = kRecordHeaderSize; i < size; ++i) record[i] = payload_byte(seq, i);
  return record;
}

bool write_record(RingWriter& writer, uint64_t seq, uint32_t size) {
  const auto record = make_record(seq, size);
  return writer.write(record.data(), size);
}

// The records a drain delivers, copied out, in order.
struct Collected {
  std::vector<std::vector<std::byte>> records;
  size_t drain(RingReader& reader) {
    return reader.drain([&](const RecordHeader* header, std::span<const std::byte> record) {
      EXPECT_EQ(static_cast<const void*>(header), static_cast<const void*>(record.data()));
      records.emplace_back(record.begin(), record.end());
    });
  }
};

uint32_t varied_size(uint64_t seq) {
  return kRecordHeaderSize + static_cast<uint32_t>(seq * 37 % 977);
}

TEST(RingBuffer, AcceptsPowerOfTwoDataAreas) {
  for (size_t data : {size_t{4096}, size_t{8192}, size_t{1} << 20}) {
    Block block(data);
    auto ring = RingBuffer::initialize(block.get(), block.size(), 1, 2, "t");
    ASSERT_TRUE(ring) << ring.error().message;
    EXPECT_EQ(ring->data_bytes(), data);
    EXPECT_EQ(ring->data(), block.data());
  }
}

TEST(RingBuffer, RejectsDataAreasThatAreNotAPowerOfTwoOrTooSmall) {
  Block block(1 << 16);
  const struct {
    size_t data;
    const char* message;
  } cases[] = {{0, "too small"},
               {2048, "too small"},
               {4096 + 8, "not a power of two"},
               {12288, "not a power of two"},
               {(1 << 16) - 8, "not a power of two"}};
  for (const auto& c : cases) {
    auto ring = RingBuffer::initialize(block.get(), ring_bytes_for(c.data), 1, 2, "t");
    ASSERT_FALSE(ring) << c.data;
    EXPECT_THAT(ring.error().message, HasSubstr(c.message)) << c.data;
  }
}

TEST(RingBuffer, RejectsMisalignedOrNullMemory) {
  Block block(8192);
  auto* misaligned = static_cast<std::byte*>(block.get()) + 8;
  auto ring = RingBuffer::initialize(misaligned, ring_bytes_for(4096), 1, 2, "t");
  ASSERT_FALSE(ring);
  EXPECT_THAT(ring.error().message, HasSubstr("aligned"));
  EXPECT_FALSE(RingBuffer::initialize(nullptr, ring_bytes_for(4096), 1, 2, "t"));
  EXPECT_FALSE(RingBuffer::attach(nullptr, ring_bytes_for(4096)));
}

TEST(RingBuffer, RecordsItsOwner) {
  Block block(4096);
  auto ring = RingBuffer::initialize(block.get(), block.size(), 42, 43, "a-very-long-thread-name");
  ASSERT_TRUE(ring);
  RingReader reader(*ring);
  EXPECT_EQ(reader.pid(), 42u);
  EXPECT_EQ(reader.tid(), 43u);
  EXPECT_EQ(reader.comm(), "a-very-long-thr");  // 15 characters, as the kernel's comm
}

TEST(RingBuffer, CommWithoutTerminatorStaysInBounds) {
  Block block(4096);
  make_ring(block);
  std::memset(block.control()->comm, 'x', sizeof(block.control()->comm));
  auto ring = RingBuffer::attach(block.get(), block.size());
  ASSERT_TRUE(ring);
  EXPECT_EQ(RingReader(*ring).comm(), std::string(16, 'x'));
}

TEST(RingBuffer, AttachAcceptsAFormattedBlock) {
  Block block(8192);
  make_ring(block);
  auto ring = RingBuffer::attach(block.get(), block.size());
  ASSERT_TRUE(ring) << ring.error().message;
  EXPECT_EQ(ring->data_bytes(), 8192u);
}

TEST(RingBuffer, AttachRejectsBadMagic) {
  Block block(4096);
  make_ring(block);
  block.control()->magic ^= 1;
  auto ring = RingBuffer::attach(block.get(), block.size());
  ASSERT_FALSE(ring);
  EXPECT_THAT(ring.error().message, HasSubstr("magic"));
}

TEST(RingBuffer, AttachRejectsAnUnformattedBlock) {
  Block block(4096);
  EXPECT_FALSE(RingBuffer::attach(block.get(), block.size()));
}

TEST(RingBuffer, AttachRejectsOtherVersions) {
  Block block(4096);
  make_ring(block);
  block.control()->version = kRingVersion + 1;
  auto ring = RingBuffer::attach(block.get(), block.size());
  ASSERT_FALSE(ring);
  EXPECT_THAT(ring.error().message, HasSubstr("version"));
}

TEST(RingBuffer, AttachRejectsASizeThatDisagreesWithTheBlock) {
  Block block(8192);
  make_ring(block);
  auto ring = RingBuffer::attach(block.get(), ring_bytes_for(4096));
  ASSERT_FALSE(ring);
  EXPECT_THAT(ring.error().message, HasSubstr("8192"));
}

TEST(RingBuffer, RoundTripsRecordsOfManySizesAcrossWraps) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  Collected got;
  constexpr uint64_t kRecords = 5000;
  uint64_t bytes = 0;
  uint64_t full = 0;
  for (uint64_t seq = 0; seq < kRecords; ++seq) {
    if (!write_record(writer, seq, varied_size(seq))) {
      ++full;
      got.drain(reader);
      ASSERT_TRUE(write_record(writer, seq, varied_size(seq))) << seq;
    }
    bytes += align_record(varied_size(seq));
  }
  got.drain(reader);
  EXPECT_FALSE(reader.corrupt()) << reader.corruption();
  ASSERT_EQ(got.records.size(), kRecords);
  for (uint64_t seq = 0; seq < kRecords; ++seq) {
    ASSERT_EQ(got.records[seq], make_record(seq, varied_size(seq))) << seq;
  }
  EXPECT_EQ(reader.lost(), full);
  EXPECT_EQ(reader.written(), kRecords);
  // More bytes went in than the records take: the rest was padding.
  EXPECT_GT(block.control()->head.load(), bytes);
  EXPECT_EQ(block.control()->tail.load(), block.control()->head.load());
}

TEST(RingBuffer, RoundTripsTheLargestRecords) {
  Block block(1 << 17);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  Collected got;
  const uint32_t sizes[] = {kMaxRecordSize, kRecordHeaderSize, kMaxRecordSize - 1,
                            40000,          kMaxRecordSize,    25,
                            kMaxRecordSize};
  for (uint64_t seq = 0; seq < std::size(sizes); ++seq) {
    ASSERT_TRUE(write_record(writer, seq, sizes[seq])) << seq;
    ASSERT_EQ(got.drain(reader), 1u) << seq;
  }
  ASSERT_EQ(got.records.size(), std::size(sizes));
  for (uint64_t seq = 0; seq < std::size(sizes); ++seq) {
    EXPECT_EQ(got.records[seq], make_record(seq, sizes[seq])) << seq;
  }
  EXPECT_EQ(reader.lost(), 0u);
}

// Puts head (and tail) at `offset` by writing and draining 8-byte-aligned
// filler records.
void advance_to(RingWriter& writer, RingReader& reader, uint32_t offset) {
  while (offset > 0) {
    const uint32_t size = offset >= 2 * kRecordHeaderSize + 512 ? 512 : offset;
    ASSERT_TRUE(write_record(writer, 0, size));
    offset -= size;
  }
  Collected().drain(reader);
}

TEST(RingBuffer, PadsTheEndWhenARecordWouldWrap) {
  for (uint32_t to_end : {8u, 16u, 24u, 40u, 200u}) {
    Block block(4096);
    auto ring = make_ring(block);
    RingWriter writer(ring);
    RingReader reader(ring);
    advance_to(writer, reader, 4096 - to_end);
    // One byte more than fits before the end, and at least a header.
    const uint32_t size = std::max(to_end + 1, kRecordHeaderSize);
    ASSERT_TRUE(write_record(writer, 9, size));
    EXPECT_EQ(load_field<uint16_t>(block.data() + 4096 - to_end, 0), kPaddingRecordType);
    EXPECT_EQ(block.control()->head.load(), 4096 + align_record(size));
    Collected got;
    ASSERT_EQ(got.drain(reader), 1u) << to_end;
    EXPECT_EQ(got.records[0], make_record(9, size));
    // The record was placed at the start of the data area.
    EXPECT_EQ(std::memcmp(block.data(), got.records[0].data(), size), 0);
  }
}

TEST(RingBuffer, FillsTheEndExactlyWithoutPadding) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  advance_to(writer, reader, 4096 - 64);
  ASSERT_TRUE(write_record(writer, 1, 64));
  EXPECT_EQ(block.control()->head.load(), 4096u);
  ASSERT_TRUE(write_record(writer, 2, 64));
  EXPECT_EQ(block.control()->head.load(), 4096u + 64);
  Collected got;
  ASSERT_EQ(got.drain(reader), 2u);
}

TEST(RingBuffer, CountsEveryLostRecordExactly) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  uint64_t seq = 0;
  while (seq < 1000 && write_record(writer, seq, 64)) ++seq;
  EXPECT_EQ(seq, 4096u / 64);
  EXPECT_EQ(reader.lost(), 1u);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(write_record(writer, seq, 64));
  EXPECT_EQ(reader.lost(), 11u);
  EXPECT_EQ(reader.written(), 64u);

  Collected got;
  ASSERT_EQ(got.drain(reader), 64u);
  for (uint64_t i = 0; i < 64; ++i) EXPECT_EQ(got.records[i], make_record(i, 64));
  for (uint64_t i = 0; i < 64; ++i) ASSERT_TRUE(write_record(writer, 64 + i, 64)) << i;
  EXPECT_FALSE(write_record(writer, 128, 64));
  EXPECT_EQ(reader.lost(), 12u);
  EXPECT_EQ(reader.written(), 128u);
  ASSERT_EQ(got.drain(reader), 64u);
  EXPECT_EQ(got.records.back(), make_record(127, 64));
}

TEST(RingBuffer, ARecordMayFillTheWholeRing) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  for (uint64_t seq = 0; seq < 3; ++seq) {
    // The writer's cached tail is a ring behind each time: it must re-read
    // the tail and find exactly enough room.
    ASSERT_TRUE(write_record(writer, seq, 4096)) << seq;
    EXPECT_FALSE(write_record(writer, 99, kRecordHeaderSize));
    Collected got;
    ASSERT_EQ(got.drain(reader), 1u);
    EXPECT_EQ(got.records[0], make_record(seq, 4096));
  }
  EXPECT_EQ(reader.lost(), 3u);
}

TEST(RingBuffer, LosesARecordThatFitsOnlyAfterPaddingWhenThereIsNoRoom) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  advance_to(writer, reader, 4096 - 32);
  // 32 bytes to the end and 4064 free at the start, minus what this holds.
  ASSERT_TRUE(write_record(writer, 1, 4000));
  const uint64_t head = block.control()->head.load();
  EXPECT_FALSE(write_record(writer, 2, 100));
  EXPECT_EQ(reader.lost(), 1u);
  EXPECT_EQ(block.control()->head.load(), head);
  Collected got;
  ASSERT_EQ(got.drain(reader), 1u);
  EXPECT_EQ(got.records[0], make_record(1, 4000));
}

TEST(RingBuffer, LosesSizesNoRecordCanHave) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  EXPECT_EQ(writer.reserve(0), nullptr);
  EXPECT_EQ(writer.reserve(kRecordHeaderSize - 1), nullptr);
  EXPECT_EQ(writer.reserve(kMaxRecordSize + 1), nullptr);
  EXPECT_EQ(writer.reserve(UINT32_MAX), nullptr);
  EXPECT_EQ(writer.reserve(4097), nullptr);  // a valid record larger than the ring
  EXPECT_EQ(reader.lost(), 5u);
  EXPECT_EQ(block.control()->head.load(), 0u);
}

TEST(RingBuffer, AnUncommittedReservationIsNeverSeen) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  void* abandoned = writer.reserve(100);
  ASSERT_NE(abandoned, nullptr);
  std::memset(abandoned, 0xee, 100);
  Collected got;
  EXPECT_EQ(got.drain(reader), 0u);
  ASSERT_TRUE(write_record(writer, 5, 48));
  ASSERT_EQ(got.drain(reader), 1u);
  EXPECT_EQ(got.records[0], make_record(5, 48));
  EXPECT_EQ(reader.written(), 1u);
}

TEST(RingBuffer, CommitStampsTheReservedSize) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  void* slot = writer.reserve(40);
  ASSERT_NE(slot, nullptr);
  std::memset(slot, 0, 40);  // a caller that forgot the size field
  writer.commit();
  ASSERT_TRUE(write_record(writer, 6, 32));
  Collected got;
  ASSERT_EQ(got.drain(reader), 2u);
  EXPECT_FALSE(reader.corrupt());
  EXPECT_EQ(got.records[0].size(), 40u);
  EXPECT_EQ(got.records[1], make_record(6, 32));
}

TEST(RingBuffer, DrainGivesBackTheSpaceOfEveryRecordItDelivered) {
  Block block(1 << 16);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  for (uint64_t seq = 0; seq < 3; ++seq) ASSERT_TRUE(write_record(writer, seq, 40));
  ASSERT_EQ(Collected().drain(reader), 3u);
  EXPECT_EQ(block.control()->tail.load(), 3u * 40);
  EXPECT_EQ(block.control()->tail.load(), block.control()->head.load());
}

TEST(RingBuffer, ReservedRecordsAreEightByteAligned) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  for (uint32_t size = kRecordHeaderSize; size < 200; ++size) {
    void* slot = writer.reserve(size);
    ASSERT_NE(slot, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(slot) % 8, 0u) << size;
    writer.commit();
    Collected().drain(reader);
  }
}

// Corruption the producer's process could cause: each must stop draining
// with a report, after the good records before it.
struct Corruption {
  const char* name;
  void (*corrupt)(const Block& block);
  size_t delivered_before;
  const char* message;
};

class RingReaderCorruption : public ::testing::TestWithParam<Corruption> {};

TEST_P(RingReaderCorruption, IsReportedNotFollowed) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  for (uint64_t seq = 0; seq < 3; ++seq) ASSERT_TRUE(write_record(writer, seq, 64));
  GetParam().corrupt(block);
  RingReader reader(ring);
  Collected got;
  EXPECT_EQ(got.drain(reader), GetParam().delivered_before);
  ASSERT_TRUE(reader.corrupt());
  EXPECT_THAT(reader.corruption(), HasSubstr(GetParam().message));
  EXPECT_EQ(got.drain(reader), 0u);
}

void set_size(const Block& block, uint32_t offset, uint16_t size) {
  store_field<uint16_t>(block.data() + offset, 2, size);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RingReaderCorruption,
    ::testing::Values(
        Corruption{"SizeBelowHeader", [](const Block& b) { set_size(b, 64, 3); }, 1,
                   "size 3, less than"},
        Corruption{"SizeZero", [](const Block& b) { set_size(b, 0, 0); }, 0, "size 0"},
        Corruption{"SizePastHead", [](const Block& b) { set_size(b, 128, 1000); }, 2,
                   "runs past head"},
        Corruption{
            "PaddingAsLastEntry",
            [](const Block& b) { store_field<uint16_t>(b.data() + 128, 0, kPaddingRecordType); }, 2,
            "not followed by a record"},
        Corruption{"HeadBeyondOneRing", [](const Block& b) { b.control()->head.store(4096 + 8); },
                   0, "not within one ring"},
        Corruption{"HeadBehindTail", [](const Block& b) { b.control()->tail.store(4096); }, 0,
                   "not within one ring"},
        Corruption{"HeadMisaligned", [](const Block& b) { b.control()->head.store(64 * 3 + 4); }, 3,
                   "cannot hold a record"},
        Corruption{"TailMisaligned", [](const Block& b) { b.control()->tail.store(4); }, 0,
                   "not 8-byte aligned"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(RingReader, ReportsPaddingThatEndsExactlyAtHead) {
  Block block(4096);
  auto ring = make_ring(block);
  RingWriter writer(ring);
  RingReader reader(ring);
  advance_to(writer, reader, 4096 - 64);
  ASSERT_TRUE(write_record(writer, 1, 64));  // ends exactly at the end of the ring
  store_field<uint16_t>(block.data() + 4096 - 64, 0, kPaddingRecordType);
  EXPECT_EQ(Collected().drain(reader), 0u);
  ASSERT_TRUE(reader.corrupt());
  EXPECT_THAT(reader.corruption(), HasSubstr("not followed by a record"));
}

TEST(RingReader, SurvivesGarbage) {
  Block block(4096);
  auto ring = make_ring(block);
  uint64_t state = 0x9e3779b97f4a7c15;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::byte* begin = block.data();
  const std::byte* end = begin + 4096;
  for (int round = 0; round < 2000; ++round) {
    for (size_t i = 0; i < 4096; i += 8) store_field(block.data() + i, 0, next());
    // Small sizes, so that some garbage frames as records.
    for (size_t i = 0; i < 4096; i += 8 * (next() % 8 + 1)) {
      store_field<uint16_t>(block.data() + i, 2, static_cast<uint16_t>(next() % 300));
    }
    const uint64_t tail = (next() % 8192) & ~uint64_t{7};
    block.control()->tail.store(tail);
    block.control()->head.store(tail + next() % 4200);
    RingReader reader(ring);
    reader.drain([&](const RecordHeader*, std::span<const std::byte> record) {
      ASSERT_GE(record.data(), begin);
      ASSERT_LE(record.data() + record.size(), end);
      ASSERT_GE(record.size(), kRecordHeaderSize);
    });
  }
}

}  // namespace
}  // namespace dprobe::trace
