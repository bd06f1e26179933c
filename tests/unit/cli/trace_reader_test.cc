// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The reader of trace memory the traced program can write: a scribbled
// header, ring or count never crashes it, a ring it cannot read on is lost
// once (said once), and the other rings go on.
#include "cli/output/trace_reader.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "trace/hit/ring_buffer.h"
#include "trace/record.h"
#include "trace/trace_memory.h"

namespace dprobe::cli {
namespace {

constexpr uint32_t kSlots = 4;
constexpr uint32_t kRecordSize = 32;  // header and ip

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    layout_ = trace::TraceMemoryLayout::compute(kSlots, 1, trace::kMinRingDataBytes);
    block_.reset(std::aligned_alloc(4096, layout_.total_bytes));
    ASSERT_TRUE(trace::TraceMemory::initialize(block_.get(), layout_.total_bytes, layout_));
    auto memory = trace::TraceMemory::attach(block_.get(), layout_.total_bytes);
    ASSERT_TRUE(memory) << memory.error().message;
    memory_.emplace(*memory);
    trace::EventDesc event;
    event.group = "g";
    event.name = "e";
    event.fixed_size = kRecordSize;
    events_.push_back(event);
    for (uint32_t i = 0; i < kSlots; ++i) {
      auto ring =
          trace::RingBuffer::initialize(memory_->ring(i), memory_->ring_bytes(), 1, 100 + i, "t");
      ASSERT_TRUE(ring);
      rings_.push_back(*ring);
      writers_.push_back(std::make_unique<trace::RingWriter>(rings_.back()));
      memory_->slot(i).generation.store(1);
      memory_->slot(i).state.store(trace::kSlotActive);
    }
    out_ = std::fopen("/dev/null", "w");
    reader_ = std::make_unique<TraceReader>(*memory_, events_, nullptr, OutputFormat::kText, out_);
  }
  void TearDown() override {
    reader_.reset();
    std::fclose(out_);
  }

  void hit(uint32_t slot) {
    unsigned char record[kRecordSize] = {};
    trace::store_field<uint16_t>(record, 0, 0);
    trace::store_field<uint16_t>(record, 2, kRecordSize);
    ASSERT_TRUE(writers_[slot]->write(record, kRecordSize));
  }
  void hit_all() {
    for (uint32_t i = 0; i < kSlots; ++i) hit(i);
  }
  size_t collect() {
    TracePass pass;
    const size_t n = reader_->collect(pass);
    pass.discard();
    return n;
  }
  trace::TraceMemoryHeader& header() {
    return *static_cast<trace::TraceMemoryHeader*>(block_.get());
  }
  size_t warnings_about(const std::string& what) {
    size_t n = 0;
    for (const std::string& problem : reader_->problems()) {
      if (problem.find(what) != std::string::npos) ++n;
    }
    return n;
  }

  trace::TraceMemoryLayout layout_;
  std::unique_ptr<void, FreeDeleter> block_;
  std::optional<trace::TraceMemory> memory_;
  std::vector<trace::EventDesc> events_;
  std::vector<trace::RingBuffer> rings_;
  std::vector<std::unique_ptr<trace::RingWriter>> writers_;
  std::FILE* out_ = nullptr;
  std::unique_ptr<TraceReader> reader_;
};

TEST_F(Hostile, HeaderScribbledAfterTheCheckIsNeverReadAgain) {
  hit_all();
  header().layout.slot_count = 0xffffffffu;
  header().layout.event_slots = 0xffffffffu;
  header().layout.ring_bytes = ~uint64_t{0};
  header().layout.rings_offset = uint64_t{1} << 60;
  header().layout.counters_offset = 12345;
  EXPECT_EQ(memory_->slot_count(), kSlots);
  EXPECT_EQ(collect(), kSlots);
  EXPECT_TRUE(reader_->problems().empty());
}

TEST_F(Hostile, RingWithABadMagicIsLostOnceAndTheOthersGoOn) {
  hit_all();
  rings_[1].control()->magic = 0xdeadbeef;
  EXPECT_EQ(collect(), kSlots - 1);
  for (int pass = 0; pass < 100; ++pass) {
    hit(0);
    EXPECT_EQ(collect(), 1u);
  }
  EXPECT_EQ(warnings_about("ring 1:"), 1u) << "said once, not once a pass";
  EXPECT_EQ(warnings_about("1 thread rings lost"), 1u);
  // Its thread may still write there: the slot stays taken.
  EXPECT_EQ(memory_->slot(1).state.load(), trace::kSlotActive);
}

TEST_F(Hostile, WildHeadOrRecordSizeLosesThatRingOnly) {
  hit_all();
  EXPECT_EQ(collect(), kSlots);
  rings_[2].control()->head.store(~uint64_t{0} - 5);
  hit(3);
  // A record whose size runs past head.
  std::byte* at = rings_[3].data() + kRecordSize;
  trace::store_field<uint16_t>(at, 2, 60000);
  hit(0);
  EXPECT_EQ(collect(), 1u);
  EXPECT_EQ(warnings_about("not within one ring"), 1u);
  EXPECT_EQ(warnings_about("runs past head"), 1u);
  EXPECT_EQ(warnings_about("2 thread rings lost"), 1u);
  hit(0);
  EXPECT_EQ(collect(), 1u);
}

TEST_F(Hostile, LostRingIsFreedOnceItsThreadRetiresIt) {
  hit_all();
  rings_[1].control()->magic = 0;
  collect();
  memory_->slot(1).state.store(trace::kSlotRetired);
  collect();
  EXPECT_EQ(memory_->slot(1).state.load(), trace::kSlotFree);
}

TEST_F(Hostile, UnbelievableLostCountsAreNotBelieved) {
  hit_all();
  collect();
  header().slotless.store(uint64_t{1} << 63);
  rings_[0].control()->lost.store(0xfedcba9876543210ull);
  collect();
  EXPECT_EQ(reader_->lost_no_slot(), 0u);
  EXPECT_EQ(reader_->lost_ring_full(), 0u);
  EXPECT_EQ(warnings_about("corrupt; kept at 0"), 2u);
}

TEST_F(Hostile, CountsThatGoBackAreNotBelieved) {
  header().slotless.store(10);
  rings_[0].control()->lost.store(7);
  collect();
  EXPECT_EQ(reader_->lost_no_slot(), 10u);
  EXPECT_EQ(reader_->lost_ring_full(), 7u);
  header().slotless.store(3);
  collect();
  EXPECT_EQ(reader_->lost_no_slot(), 10u);
}

// A thread's records come out in the order it wrote them, even when the
// second one's counter reads behind the first's (another core's counter,
// a conversion refined in between): its time is then the first's.
TEST_F(Hostile, AThreadsLinesKeepTheirOrderWhenItsClockStepsBack) {
  for (const uint64_t ns : {uint64_t{5000}, uint64_t{4000}}) {
    unsigned char record[kRecordSize] = {};
    trace::store_field<uint16_t>(record, 2, kRecordSize);
    trace::store_field<uint64_t>(record, offsetof(trace::RecordHeader, timestamp), ns);
    ASSERT_TRUE(writers_[0]->write(record, kRecordSize));
  }
  TracePass pass;
  ASSERT_EQ(reader_->collect(pass), 2u);
  std::FILE* text = std::tmpfile();
  ASSERT_NE(text, nullptr);
  ASSERT_EQ(pass.write(text, UINT64_MAX), 0);
  std::rewind(text);
  char line[256];
  std::vector<std::string> times;
  while (std::fgets(line, sizeof(line), text) != nullptr) {
    const std::string whole(line);
    times.push_back(whole.substr(whole.find(" 0.") + 1, 8));
  }
  std::fclose(text);
  EXPECT_EQ(times, (std::vector<std::string>{"0.000005", "0.000005"}));
}

TEST(PlausibleCount, GrowsNoFasterThanOneANanosecond) {
  PlausibleCount count;
  EXPECT_EQ(count.observe(100, 1'000'000'000), 100u);
  EXPECT_EQ(count.observe(5000, 1'000'001'000), 5000u);  // within slack
  EXPECT_FALSE(count.corrupt());
  EXPECT_EQ(count.observe(uint64_t{1} << 62, 1'000'002'000), 5000u);
  EXPECT_TRUE(count.corrupt());
  EXPECT_EQ(count.observe(6000, 1'000'003'000), 5000u) << "held once corrupt";
}

// A ring first looked at late (the reader busy, the machine loaded) may
// have counted for as long as the session ran: 12 million in 100 ms is a
// busy thread, not a corrupt count.
TEST(PlausibleCount, TheFirstLookAllowsForTheTimeSinceTheSessionBegan) {
  const uint64_t start = 1'000'000'000;
  PlausibleCount count(start);
  EXPECT_EQ(count.observe(12'000'000, start + 100'000'000), 12'000'000u);
  EXPECT_FALSE(count.corrupt());
  PlausibleCount unknown;
  unknown.observe(12'000'000, start + 100'000'000);
  EXPECT_TRUE(unknown.corrupt()) << "without a start, only the slack";
}

}  // namespace
}  // namespace dprobe::cli
