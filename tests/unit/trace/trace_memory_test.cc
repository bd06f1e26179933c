// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The session's shared memory block: its layout (page-aligned parts that
// never overlap), formatting by the agent, attaching by the CLI, and an
// attach that trusts nothing the header says.
#include "trace/trace_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <tuple>
#include <vector>

#include "trace/hit/ring_buffer.h"
#include "trace/shared_memory.h"

namespace dprobe::trace {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kPage = 4096;

// Fresh zero pages, as a new memfd gives.
class Block {
 public:
  explicit Block(size_t size) : size_(size) {
    void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) std::abort();
    data_ = mapping;
  }
  ~Block() { munmap(data_, size_); }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  TraceMemoryHeader& header() const { return *static_cast<TraceMemoryHeader*>(data_); }

 private:
  void* data_;
  size_t size_;
};

struct Shape {
  uint32_t slot_count;
  uint32_t event_slots;
  uint64_t ring_data_bytes;
};

const Shape kShapes[] = {
    {1, 1, 4096},          {4, 3, 8192},         {64, 10, 1u << 20},
    {100, 1000, 1u << 16}, {1000, 65536, 4096},  {0, 1, 4096},
    {3, 0, 4096},          {170, 171, 1u << 12}, {2, 1, uint64_t{1} << 32},
};

TEST(TraceMemoryLayout, PartsArePageAlignedAndDoNotOverlap) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(testing::Message() << s.slot_count << " slots, " << s.event_slots << " events, "
                                    << s.ring_data_bytes << " ring bytes");
    const auto layout = TraceMemoryLayout::compute(s.slot_count, s.event_slots, s.ring_data_bytes);
    EXPECT_EQ(layout.slot_count, s.slot_count);
    EXPECT_EQ(layout.event_slots, s.event_slots);
    EXPECT_EQ(layout.ring_bytes, kRingControlBytes + s.ring_data_bytes);
    EXPECT_EQ(layout.counters_offset % kPage, 0u);
    EXPECT_EQ(layout.slots_offset % kPage, 0u);
    EXPECT_EQ(layout.rings_offset % kPage, 0u);
    EXPECT_EQ(layout.ring_bytes % kPage, 0u);
    EXPECT_EQ(layout.total_bytes % kPage, 0u);
    // In order, each part after the end of the one before.
    EXPECT_GE(layout.counters_offset, sizeof(TraceMemoryHeader));
    EXPECT_GE(layout.syscalls_offset,
              layout.counters_offset + uint64_t{s.event_slots} * sizeof(EventCounter));
    EXPECT_GE(layout.slots_offset,
              layout.syscalls_offset + uint64_t{kSyscallStatsCount} * sizeof(SyscallStats));
    EXPECT_GE(layout.rings_offset,
              layout.slots_offset + uint64_t{s.slot_count} * sizeof(SlotState));
    EXPECT_EQ(layout.total_bytes, layout.rings_offset + uint64_t{s.slot_count} * layout.ring_bytes);
    // And no bigger than needed: each gap is less than a page.
    EXPECT_LT(layout.counters_offset - sizeof(TraceMemoryHeader), kPage);
    EXPECT_LT(layout.syscalls_offset - layout.counters_offset -
                  uint64_t{s.event_slots} * sizeof(EventCounter),
              kPage);
    EXPECT_LT(layout.slots_offset - layout.syscalls_offset -
                  uint64_t{kSyscallStatsCount} * sizeof(SyscallStats),
              kPage);
  }
}

// Only the system call table, which every session has, takes room.
TEST(TraceMemoryLayout, EmptyPartsTakeNoRoom) {
  const auto layout = TraceMemoryLayout::compute(0, 0, 4096);
  const uint64_t syscalls = (kSyscallStatsCount * sizeof(SyscallStats) + kPage - 1) / kPage * kPage;
  EXPECT_EQ(layout.counters_offset, kPage);
  EXPECT_EQ(layout.syscalls_offset, kPage);
  EXPECT_EQ(layout.slots_offset, kPage + syscalls);
  EXPECT_EQ(layout.rings_offset, kPage + syscalls);
  EXPECT_EQ(layout.total_bytes, kPage + syscalls);
}

TEST(TraceMemory, InitializeThenAttach) {
  const auto layout = TraceMemoryLayout::compute(8, 5, 8192);
  Block block(layout.total_bytes);
  auto memory = TraceMemory::initialize(block.data(), block.size(), layout);
  ASSERT_TRUE(memory) << memory.error().message;
  const TraceMemoryHeader& h = block.header();
  EXPECT_EQ(h.magic, kTraceMemoryMagic);
  EXPECT_EQ(h.version, kTraceMemoryVersion);
  EXPECT_EQ(h.layout.slot_count, 8u);
  EXPECT_EQ(h.layout.event_slots, 5u);
  EXPECT_TRUE(h.layout == layout);
  EXPECT_EQ(memory->slot_count(), 8u);
  EXPECT_EQ(memory->event_slots(), 5u);
  EXPECT_EQ(memory->ring_bytes(), layout.ring_bytes);

  auto attached = TraceMemory::attach(block.data(), block.size());
  ASSERT_TRUE(attached) << attached.error().message;
  EXPECT_EQ(attached->slot_count(), 8u);
  EXPECT_EQ(attached->event_slots(), 5u);
  EXPECT_EQ(attached->ring_bytes(), layout.ring_bytes);
  EXPECT_EQ(&attached->counter(4), &memory->counter(4));
  EXPECT_EQ(&attached->slot(7), &memory->slot(7));
  EXPECT_EQ(attached->ring(7), memory->ring(7));
}

TEST(TraceMemory, HistTablesFollowTheRingsOnePageAlignedBlockPerSlot) {
  const auto layout = TraceMemoryLayout::compute(3, 2, 8192, 5000);
  EXPECT_EQ(layout.hist_slot_bytes, 2 * kPage);
  EXPECT_EQ(layout.hists_offset, layout.rings_offset + 3 * layout.ring_bytes);
  EXPECT_EQ(layout.total_bytes, layout.hists_offset + 3 * 2 * kPage);
  Block block(layout.total_bytes);
  auto memory = TraceMemory::initialize(block.data(), block.size(), layout);
  ASSERT_TRUE(memory) << memory.error().message;
  auto attached = TraceMemory::attach(block.data(), block.size());
  ASSERT_TRUE(attached) << attached.error().message;
  EXPECT_EQ(attached->hist_slot_bytes(), 2 * kPage);
  EXPECT_EQ(attached->hist_tables(2), memory->hist_tables(2));
  EXPECT_EQ(attached->hist_tables(2) + 2 * kPage,
            reinterpret_cast<std::byte*>(block.data()) + layout.total_bytes);
  // A header that claims more hist tables than the block holds is refused.
  block.header().layout.hist_slot_bytes = block.size();
  EXPECT_FALSE(TraceMemory::attach(block.data(), block.size()));
}

TEST(TraceMemory, AttachThroughAnotherMappingSeesTheSameCounters) {
  // The agent formats a memfd; the CLI maps the descriptor it was sent.
  const auto layout = TraceMemoryLayout::compute(4, 3, 4096);
  auto agent_shm = SharedMemory::create("dprobe-trace-test", layout.total_bytes);
  ASSERT_TRUE(agent_shm) << agent_shm.error().message;
  auto agent = TraceMemory::initialize(agent_shm->data(), agent_shm->size(), layout);
  ASSERT_TRUE(agent) << agent.error().message;
  auto cli_shm = SharedMemory::map(agent_shm->fd());
  ASSERT_TRUE(cli_shm) << cli_shm.error().message;
  auto cli = TraceMemory::attach(cli_shm->data(), cli_shm->size());
  ASSERT_TRUE(cli) << cli.error().message;

  agent->counter(2).hits.fetch_add(5);
  agent->counter(2).misses.fetch_add(1);
  agent->slot(3).state.store(kSlotActive);
  agent->header().slotless.fetch_add(9);
  EXPECT_EQ(cli->counter(2).hits.load(), 5u);
  EXPECT_EQ(cli->counter(2).misses.load(), 1u);
  EXPECT_EQ(cli->slot(3).state.load(), kSlotActive);
  EXPECT_EQ(cli->header().slotless.load(), 9u);
  cli->counter(1).disabled.store(1);  // the CLI disables an event
  EXPECT_EQ(agent->counter(1).disabled.load(), 1u);
}

TEST(TraceMemory, CountersStartZeroAndSlotsFree) {
  const auto layout = TraceMemoryLayout::compute(16, 40, 4096);
  Block block(layout.total_bytes);
  auto memory = TraceMemory::initialize(block.data(), block.size(), layout);
  ASSERT_TRUE(memory) << memory.error().message;
  EXPECT_EQ(memory->header().slotless.load(), 0u);
  for (uint32_t i = 0; i < memory->event_slots(); ++i) {
    EXPECT_EQ(memory->counter(i).hits.load(), 0u) << i;
    EXPECT_EQ(memory->counter(i).misses.load(), 0u) << i;
    EXPECT_EQ(memory->counter(i).disabled.load(), 0u) << i;
  }
  for (uint32_t i = 0; i < memory->slot_count(); ++i) {
    EXPECT_EQ(memory->slot(i).state.load(), kSlotFree) << i;
    EXPECT_EQ(memory->slot(i).generation.load(), 0u) << i;
  }
}

TEST(TraceMemory, CountersAndSlotsLieInTheirOwnParts) {
  const auto layout = TraceMemoryLayout::compute(16, 40, 4096);
  Block block(layout.total_bytes);
  auto memory = TraceMemory::initialize(block.data(), block.size(), layout);
  ASSERT_TRUE(memory);
  const auto* base = static_cast<const std::byte*>(block.data());
  const auto offset = [&](const void* p) {
    return static_cast<uint64_t>(static_cast<const std::byte*>(p) - base);
  };
  EXPECT_EQ(offset(&memory->counter(0)), layout.counters_offset);
  EXPECT_LE(offset(&memory->counter(39)) + sizeof(EventCounter), layout.slots_offset);
  EXPECT_EQ(offset(&memory->slot(0)), layout.slots_offset);
  EXPECT_LE(offset(&memory->slot(15)) + sizeof(SlotState), layout.rings_offset);
  EXPECT_EQ(offset(&memory->header().slotless) % 64, 0u);
}

TEST(TraceMemory, RingsAreDistinctInsideTheBlockAndUsable) {
  for (const Shape& s : {Shape{1, 1, 4096}, Shape{7, 2, 8192}, Shape{32, 3, 1u << 16}}) {
    const auto layout = TraceMemoryLayout::compute(s.slot_count, s.event_slots, s.ring_data_bytes);
    Block block(layout.total_bytes);
    auto memory = TraceMemory::initialize(block.data(), block.size(), layout);
    ASSERT_TRUE(memory) << memory.error().message;
    const auto begin = reinterpret_cast<uintptr_t>(block.data());
    const uintptr_t end = begin + block.size();
    std::set<uintptr_t> seen;
    for (uint32_t i = 0; i < s.slot_count; ++i) {
      const auto ring = reinterpret_cast<uintptr_t>(memory->ring(i));
      EXPECT_TRUE(seen.insert(ring).second) << i;
      EXPECT_GE(ring, begin + layout.rings_offset) << i;
      EXPECT_LE(ring + layout.ring_bytes, end) << i;
      EXPECT_EQ((ring - begin) % kPage, 0u) << i;
      if (i > 0) {
        EXPECT_EQ(ring - reinterpret_cast<uintptr_t>(memory->ring(i - 1)), layout.ring_bytes);
      }
      // Each is a whole ring: the ring code formats and attaches it.
      auto formatted =
          RingBuffer::initialize(memory->ring(i), layout.ring_bytes, 1, 100 + i, "worker");
      ASSERT_TRUE(formatted) << formatted.error().message;
    }
    // Rings formatted in place left the header, counters and slots alone.
    auto attached = TraceMemory::attach(block.data(), block.size());
    ASSERT_TRUE(attached) << attached.error().message;
    EXPECT_EQ(attached->slot(0).state.load(), kSlotFree);
    for (uint32_t i = 0; i < s.slot_count; ++i) {
      auto ring = RingBuffer::attach(attached->ring(i), layout.ring_bytes);
      ASSERT_TRUE(ring) << ring.error().message;
      EXPECT_EQ(ring->control()->tid, 100 + i);
    }
  }
}

TEST(TraceMemory, InitializeRefusesTooSmallMemory) {
  const auto layout = TraceMemoryLayout::compute(4, 4, 4096);
  Block block(layout.total_bytes);
  auto memory = TraceMemory::initialize(block.data(), layout.total_bytes - 1, layout);
  ASSERT_FALSE(memory);
  EXPECT_THAT(memory.error().message, HasSubstr("too small"));
  EXPECT_EQ(block.header().magic, 0u);  // nothing written
}

// ---- attach trusts nothing -----------------------------------------------

class TraceMemoryAttach : public ::testing::Test {
 protected:
  TraceMemoryAttach()
      : layout_(TraceMemoryLayout::compute(4, 6, 8192)), block_(layout_.total_bytes + kPage) {
    auto memory = TraceMemory::initialize(block_.data(), block_.size(), layout_);
    if (!memory) std::abort();
  }

  Result<TraceMemory> attach() const { return TraceMemory::attach(block_.data(), block_.size()); }
  TraceMemoryHeader& header() { return block_.header(); }

  TraceMemoryLayout layout_;
  Block block_;
};

TEST_F(TraceMemoryAttach, WellFormedBlockAttaches) { EXPECT_TRUE(attach()); }

TEST_F(TraceMemoryAttach, RejectsBadMagic) {
  header().magic ^= 1;
  auto memory = attach();
  ASSERT_FALSE(memory);
  EXPECT_THAT(memory.error().message, HasSubstr("magic"));
}

TEST_F(TraceMemoryAttach, RejectsZeroedMemory) {
  header().magic = 0;
  header().version = 0;
  EXPECT_FALSE(attach());
}

TEST_F(TraceMemoryAttach, RejectsOtherVersion) {
  header().version = kTraceMemoryVersion + 1;
  auto memory = attach();
  ASSERT_FALSE(memory);
  EXPECT_THAT(memory.error().message, HasSubstr("version"));
}

TEST_F(TraceMemoryAttach, RejectsBlockTooSmallForAHeader) {
  auto memory = TraceMemory::attach(block_.data(), sizeof(TraceMemoryHeader) - 1);
  ASSERT_FALSE(memory);
  EXPECT_THAT(memory.error().message, HasSubstr("too small"));
  EXPECT_FALSE(TraceMemory::attach(block_.data(), 0));
}

TEST_F(TraceMemoryAttach, RejectsBlockSmallerThanItsLayout) {
  EXPECT_TRUE(TraceMemory::attach(block_.data(), layout_.total_bytes));
  auto memory = TraceMemory::attach(block_.data(), layout_.total_bytes - 1);
  ASSERT_FALSE(memory);
  EXPECT_THAT(memory.error().message, HasSubstr("inconsistent"));
}

TEST_F(TraceMemoryAttach, RejectsEveryInconsistentField) {
  const auto restore = [&] { header().layout = layout_; };
  const auto expect_rejected = [&](const char* what) {
    auto memory = attach();
    EXPECT_FALSE(memory) << what;
    if (!memory) {
      EXPECT_THAT(memory.error().message, HasSubstr("inconsistent")) << what;
    }
    restore();
    ASSERT_TRUE(attach()) << what;
  };

  header().layout.counters_offset += kPage;
  expect_rejected("counters offset");
  header().layout.counters_offset = 0;  // over the header
  expect_rejected("counters over the header");
  header().layout.slots_offset -= kPage;
  expect_rejected("slots offset");
  header().layout.rings_offset += kPage;
  expect_rejected("rings offset");
  header().layout.total_bytes += kPage;
  expect_rejected("total bytes");
  header().layout.total_bytes -= kPage;
  expect_rejected("total bytes short");
  header().layout.slot_count += 1;  // more rings than the total holds
  expect_rejected("slot count");
  header().layout.event_slots = 100000;  // counters running into the slots
  expect_rejected("event slots");
  header().layout.ring_bytes += kPage;
  expect_rejected("ring bytes");
  header().layout.ring_bytes = kRingControlBytes;  // no data area at all
  expect_rejected("ring without data");
  header().layout.ring_bytes = 0;
  expect_rejected("ring of zero bytes");
}

TEST_F(TraceMemoryAttach, ConsistentButBiggerThanTheMemoryIsRejected) {
  // A header consistent with itself, describing more rings than mapped.
  const auto big = TraceMemoryLayout::compute(400, 6, 8192);
  header().layout.slot_count = big.slot_count;
  header().layout.rings_offset = big.rings_offset;
  header().layout.slots_offset = big.slots_offset;
  header().layout.counters_offset = big.counters_offset;
  header().layout.total_bytes = big.total_bytes;
  auto memory = attach();
  EXPECT_FALSE(memory);
}

// A hostile header whose sizes overflow 64 bits: slot_count * ring_bytes
// wraps around to a small total that fits the block, while ring(1) would
// lie 8 EiB away. Attach must not hand out rings outside the block.
TEST_F(TraceMemoryAttach, RejectsRingSizesThatOverflowTheTotal) {
  const uint64_t huge_data = uint64_t{1} << 63;
  const auto hostile = TraceMemoryLayout::compute(2, 6, huge_data);
  ASSERT_EQ(hostile.ring_bytes, kRingControlBytes + huge_data);
  ASSERT_LE(hostile.total_bytes, block_.size()) << "the wrapped total fits the block";
  header().layout.slot_count = hostile.slot_count;
  header().layout.ring_bytes = hostile.ring_bytes;
  header().layout.counters_offset = hostile.counters_offset;
  header().layout.slots_offset = hostile.slots_offset;
  header().layout.rings_offset = hostile.rings_offset;
  header().layout.total_bytes = hostile.total_bytes;
  auto memory = attach();
  if (memory) {
    const auto begin = reinterpret_cast<uintptr_t>(block_.data());
    const auto ring = reinterpret_cast<uintptr_t>(memory->ring(1));
    ADD_FAILURE() << "attached; ring(1) is at block + 0x" << std::hex << (ring - begin)
                  << ", the block is 0x" << block_.size() << " bytes";
  }
}

}  // namespace
}  // namespace dprobe::trace
