// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/hit/hist_table.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "trace/record.h"

namespace dprobe::trace {
namespace {

// An event with a number, a signed number and a string argument, and a
// hit on it whose fields the tests set.
class HistTableTest : public ::testing::Test {
 protected:
  HistTableTest() {
    event_.is_return = true;  // for $duration
    event_.args = {arg("size", TypeId::kU64), arg("fd", TypeId::kS32),
                   arg("name", TypeId::kString)};
    layout_event(event_);
    fields_ = record_fields(event_);
    set_comm("python3");
  }

  static EventArg arg(std::string name, TypeId type) {
    EventArg a;
    a.name = std::move(name);
    a.type = type;
    return a;
  }

  const RecordField& field(const char* name) const { return *find_record_field(fields_, name); }

  HistKey key(const char* name, uint16_t modifiers = 0) const {
    HistKey k;
    k.field = field(name);
    k.label = name;
    k.modifiers = modifiers;
    return k;
  }
  static HistKey stack_key() {
    HistKey k;
    k.stacktrace = true;
    k.label = "common_stacktrace";
    return k;
  }

  void set_size(uint64_t v) { store_field<uint64_t>(record_, field("size").offset, v); }
  void set_fd(int32_t v) { store_field<int32_t>(record_, field("fd").offset, v); }
  // common_pid: the thread, as the kernel's task pid.
  void set_pid(uint32_t tid) { store_field<uint32_t>(record_, offsetof(RecordHeader, tid), tid); }
  void set_name(const std::string& s) {
    std::memcpy(record_ + event_.fixed_size, s.c_str(), s.size() + 1);
    const auto length = static_cast<uint32_t>(s.size() + 1);
    store_field<uint32_t>(record_, field("name").offset, make_data_loc(event_.fixed_size, length));
  }
  void set_comm(const char* comm) {
    std::memset(comm_, 0, sizeof(comm_));
    std::strncpy(comm_, comm, sizeof(comm_));
  }
  HitFields hit() const { return {record_, comm_, duration_}; }

  // A zeroed table for `spec`, 8-byte aligned.
  static std::vector<uint64_t> table_for(const HistSpec& spec) {
    const uint64_t bytes = hist_table_bytes(spec);
    EXPECT_NE(bytes, 0u);
    return std::vector<uint64_t>(bytes / 8, 0);
  }
  static HistResult merge(const HistSpec& spec, const std::vector<uint64_t>& table) {
    HistResult result;
    EXPECT_TRUE(hist_merge(result, table.data(), table.size() * 8, spec));
    return result;
  }

  EventDesc event_;
  std::vector<RecordField> fields_;
  alignas(8) std::byte record_[1024] = {};
  char comm_[16] = {};
  uint64_t duration_ = 0;
};

const HistEntry* find_number(const HistResult& result, uint64_t number) {
  for (const HistEntry& e : result.entries) {
    if (e.keys[0].number == number) return &e;
  }
  return nullptr;
}

TEST_F(HistTableTest, ZeroedMemoryIsAnEmptyTable) {
  HistSpec spec;
  spec.keys = {key("size")};
  const auto table = table_for(spec);
  const HistResult result = merge(spec, table);
  EXPECT_TRUE(result.entries.empty());
  EXPECT_EQ(result.hits, 0u);
  EXPECT_EQ(result.dropped, 0u);
}

TEST_F(HistTableTest, TableBytesFollowTheLayout) {
  HistSpec spec;
  spec.keys = {key("size")};
  // header + 2 slots per entry + entries of hitcount and key.
  EXPECT_EQ(spec.entry_bytes(), 16u);
  EXPECT_EQ(hist_table_bytes(spec), 64u + 2048 * 8 * 2 + 2048 * 16);
  spec.keys = {key("name")};
  spec.vals = {key("size"), key("fd")};
  EXPECT_EQ(spec.entry_bytes(), 8u + 16 + 256);
  spec.keys = {key("common_pid", kHistExecname), stack_key()};
  spec.vals.clear();
  EXPECT_EQ(spec.entry_bytes(), 8u + 16 + 8 + 128);
  spec.size = 1000;  // not a power of two
  EXPECT_EQ(hist_table_bytes(spec), 0u);
  spec.size = 64;  // below the kernel's minimum
  EXPECT_EQ(hist_table_bytes(spec), 0u);
  spec.size = 2048;
  spec.keys.clear();
  EXPECT_EQ(hist_table_bytes(spec), 0u);
}

TEST_F(HistTableTest, CountsHitsPerKeyAndSumsValues) {
  HistSpec spec;
  spec.keys = {key("size")};
  spec.vals = {key("fd"), key("$duration")};
  auto table = table_for(spec);
  const struct {
    uint64_t size;
    int32_t fd;
    uint64_t duration;
  } hits[] = {{10, 3, 100}, {20, 4, 5}, {10, -1, 7}, {10, 5, 1}};
  for (const auto& h : hits) {
    set_size(h.size);
    set_fd(h.fd);
    duration_ = h.duration;
    hist_update(table.data(), spec, hit(), nullptr, 0);
  }
  const HistResult result = merge(spec, table);
  ASSERT_EQ(result.entries.size(), 2u);
  EXPECT_EQ(result.entries[0].keys[0].number, 10u);  // first hit first
  EXPECT_EQ(result.entries[0].hitcount, 3u);
  EXPECT_EQ(result.entries[0].vals, (std::vector<uint64_t>{7, 108}));  // 3 + -1 + 5
  EXPECT_EQ(result.entries[1].keys[0].number, 20u);
  EXPECT_EQ(result.entries[1].hitcount, 1u);
  EXPECT_EQ(result.hits, 4u);
  EXPECT_EQ(result.dropped, 0u);
  const auto* header = reinterpret_cast<const HistTableHeader*>(table.data());
  EXPECT_EQ(header->used, 2u);
  EXPECT_EQ(header->size, 2048u);
  EXPECT_EQ(header->entry_bytes, spec.entry_bytes());
}

// A key is hashed and compared only as far as its value goes; keys whose
// first words agree but whose strings end in different words stay apart,
// and a string before a number key is stored after it.
TEST_F(HistTableTest, StringKeysThatShareTheirFirstWordsStayApart) {
  HistSpec spec;
  spec.keys = {key("name"), key("size")};
  EXPECT_EQ(hist_key_offset(spec, 0), 8u);  // numbers first
  EXPECT_EQ(hist_key_offset(spec, 1), 0u);
  auto table = table_for(spec);
  const struct {
    const char* name;
    uint64_t size;
  } hits[] = {{"abcdefghi", 1}, {"abcdefgh", 1}, {"abcdefgh", 1},         {"", 1},
              {"abcdefghi", 2}, {"abcdefgh", 1}, {"abcdefghijklmnopq", 1}};
  for (const auto& h : hits) {
    set_name(h.name);
    set_size(h.size);
    hist_update(table.data(), spec, hit(), nullptr, 0);
  }
  const HistResult result = merge(spec, table);
  ASSERT_EQ(result.entries.size(), 5u);
  const std::pair<std::string, uint64_t> expected[] = {
      {"abcdefghi", 1}, {"abcdefgh", 3}, {"", 1}, {"abcdefghi", 1}, {"abcdefghijklmnopq", 1}};
  for (size_t i = 0; i < result.entries.size(); ++i) {
    EXPECT_EQ(result.entries[i].keys[0].text, expected[i].first) << i;
    EXPECT_EQ(result.entries[i].hitcount, expected[i].second) << i;
  }
  EXPECT_EQ(result.entries[3].keys[1].number, 2u);
}

// A planned update (the agent's) and one that plans on the spot fill the
// table alike.
TEST_F(HistTableTest, APlannedUpdateIsTheSameUpdate) {
  HistSpec spec;
  spec.keys = {key("name"), stack_key()};  // the kernel's largest key: 256 + 128 bytes
  const HistPlan plan = hist_plan(spec);
  ASSERT_TRUE(plan.valid);
  auto planned = table_for(spec);
  auto unplanned = table_for(spec);
  const uint64_t stack[] = {0x401000, 0x401100, 0x401200};
  for (int i = 0; i < 50; ++i) {
    set_name(std::string(static_cast<size_t>(i % 7), 'x'));
    hist_update(planned.data(), spec, plan, hit(), stack, static_cast<uint32_t>(i % 4));
    hist_update(unplanned.data(), spec, hit(), stack, static_cast<uint32_t>(i % 4));
  }
  EXPECT_EQ(planned, unplanned);
  EXPECT_EQ(merge(spec, planned).entries.size(), 28u);  // 7 names x 4 depths
}

TEST_F(HistTableTest, SignedKeysAreSignExtended) {
  HistSpec spec;
  spec.keys = {key("fd")};
  auto table = table_for(spec);
  set_fd(-2);
  hist_update(table.data(), spec, hit(), nullptr, 0);
  const HistResult result = merge(spec, table);
  ASSERT_EQ(result.entries.size(), 1u);
  EXPECT_EQ(result.entries[0].keys[0].number, static_cast<uint64_t>(-2));
}

TEST_F(HistTableTest, ValueModifiersAreTheKernels) {
  HistKey log2 = key("size", kHistLog2);
  const struct {
    uint64_t in;
    uint64_t out;
  } cases[] = {{0, 0},         {1, 0},     {2, 1},     {3, 2},           {4, 2},
               {5, 3},         {4096, 12}, {4097, 13}, {1ull << 63, 63}, {(1ull << 63) + 1, 0},
               {UINT64_MAX, 0}};
  for (const auto& c : cases) {
    set_size(c.in);
    EXPECT_EQ(hist_field_value(log2, hit()), c.out) << c.in;
  }
  HistKey buckets = key("size", kHistBuckets);
  buckets.buckets = 1000;
  set_size(2999);
  EXPECT_EQ(hist_field_value(buckets, hit()), 2000u);
  set_size(UINT64_MAX);
  EXPECT_EQ(hist_field_value(buckets, hit()), UINT64_MAX / 1000 * 1000);
  duration_ = 123456;
  EXPECT_EQ(hist_field_value(key("$duration", kHistUsecs), hit()), 123u);
  EXPECT_EQ(hist_field_value(key("$duration"), hit()), 123456u);
  set_size(123456);
  EXPECT_EQ(hist_field_value(key("size", kHistUsecs), hit()), 123456u);  // no-op off $duration
  EXPECT_EQ(hist_field_value(key("$duration", kHistUsecs | kHistLog2), hit()), 7u);  // 123 -> 2^7
}

TEST_F(HistTableTest, LogKeysGroupHits) {
  HistSpec spec;
  spec.keys = {key("size", kHistLog2)};
  auto table = table_for(spec);
  for (uint64_t size : {4097u, 5000u, 8192u, 3u}) {
    set_size(size);
    hist_update(table.data(), spec, hit(), nullptr, 0);
  }
  const HistResult result = merge(spec, table);
  ASSERT_EQ(result.entries.size(), 2u);
  EXPECT_EQ(find_number(result, 13)->hitcount, 3u);
  EXPECT_EQ(find_number(result, 2)->hitcount, 1u);
}

TEST_F(HistTableTest, StringKeysKeepTheKernelsLength) {
  HistSpec spec;
  spec.keys = {key("name"), key("size")};
  auto table = table_for(spec);
  const std::string long_a = std::string(255, 'x') + "a";
  const std::string long_b = std::string(255, 'x') + "b";
  for (const std::string& name : {std::string("libc.so.6"), std::string("libz.so"),
                                  std::string("libc.so.6"), long_a, long_b, std::string()}) {
    set_name(name);
    set_size(1);
    hist_update(table.data(), spec, hit(), nullptr, 0);
  }
  const HistResult result = merge(spec, table);
  // The long names differ after the kernel's 255 bytes: one key.
  ASSERT_EQ(result.entries.size(), 4u);
  EXPECT_EQ(result.entries[0].keys[0].text, "libc.so.6");
  EXPECT_EQ(result.entries[0].hitcount, 2u);
  EXPECT_EQ(result.entries[0].keys[1].number, 1u);
  EXPECT_EQ(result.entries[1].keys[0].text, "libz.so");
  EXPECT_EQ(result.entries[2].keys[0].text, std::string(255, 'x'));
  EXPECT_EQ(result.entries[2].hitcount, 2u);
  EXPECT_EQ(result.entries[3].keys[0].text, "");
}

TEST_F(HistTableTest, CommKeyAndExecnameKeepTheThreadName) {
  HistSpec spec;
  spec.keys = {key("comm"), key("common_pid", kHistExecname)};
  auto table = table_for(spec);
  set_pid(7);
  set_comm("python3");
  hist_update(table.data(), spec, hit(), nullptr, 0);
  set_comm("worker-thread-1");  // 15 bytes
  hist_update(table.data(), spec, hit(), nullptr, 0);
  set_comm("python3");
  hist_update(table.data(), spec, hit(), nullptr, 0);
  const HistResult result = merge(spec, table);
  ASSERT_EQ(result.entries.size(), 2u);
  EXPECT_EQ(result.entries[0].keys[0].text, "python3");
  EXPECT_EQ(result.entries[0].keys[1].number, 7u);
  EXPECT_EQ(result.entries[0].comm, "python3");
  EXPECT_EQ(result.entries[0].hitcount, 2u);
  EXPECT_EQ(result.entries[1].keys[0].text, "worker-thread-1");
  EXPECT_EQ(result.entries[1].comm, "worker-thread-1");
}

TEST_F(HistTableTest, StackKeysKeepSixteenFrames) {
  HistSpec spec;
  spec.keys = {stack_key()};
  auto table = table_for(spec);
  std::vector<uint64_t> deep(40);
  for (size_t i = 0; i < deep.size(); ++i) deep[i] = 0x401000 + i;
  const uint64_t shallow[] = {0x401000, 0x402000};
  hist_update(table.data(), spec, hit(), deep.data(), static_cast<uint32_t>(deep.size()));
  hist_update(table.data(), spec, hit(), shallow, 2);
  // The same first sixteen frames: the same key.
  deep[30] = 1;
  hist_update(table.data(), spec, hit(), deep.data(), static_cast<uint32_t>(deep.size()));
  hist_update(table.data(), spec, hit(), nullptr, 0);
  const HistResult result = merge(spec, table);
  ASSERT_EQ(result.entries.size(), 3u);
  EXPECT_EQ(result.entries[0].keys[0].frames,
            std::vector<uint64_t>(deep.begin(), deep.begin() + kHistStackDepth));
  EXPECT_EQ(result.entries[0].hitcount, 2u);
  EXPECT_EQ(result.entries[1].keys[0].frames, (std::vector<uint64_t>{0x401000, 0x402000}));
  EXPECT_TRUE(result.entries[2].keys[0].frames.empty());
}

TEST_F(HistTableTest, FullTableCountsDroppedExactly) {
  HistSpec spec;
  spec.keys = {key("size")};
  spec.size = kHistSizeMin;
  auto table = table_for(spec);
  uint64_t hits = 0;
  for (uint64_t round = 0; round < 3; ++round) {
    for (uint64_t size = 0; size < 300; ++size) {
      set_size(size * 7919);
      hist_update(table.data(), spec, hit(), nullptr, 0);
      ++hits;
    }
  }
  const HistResult result = merge(spec, table);
  EXPECT_EQ(result.entries.size(), kHistSizeMin);
  // The first 128 keys kept every hit; the other 172 lost all three.
  EXPECT_EQ(result.dropped, 3u * (300 - kHistSizeMin));
  EXPECT_EQ(result.hits, 3u * kHistSizeMin);
  EXPECT_EQ(result.hits + result.dropped, hits);
  for (const HistEntry& e : result.entries) {
    EXPECT_EQ(e.hitcount, 3u);
    EXPECT_LT(e.keys[0].number / 7919, kHistSizeMin);
  }
}

TEST_F(HistTableTest, MergeSumsEqualKeysAcrossTables) {
  HistSpec spec;
  spec.keys = {key("size")};
  spec.vals = {key("fd")};
  std::vector<std::vector<uint64_t>> tables(3, table_for(spec));
  // Table t holds keys t..t+4, each hit t+1 times with fd 10.
  for (uint64_t t = 0; t < tables.size(); ++t) {
    for (uint64_t k = t; k < t + 5; ++k) {
      for (uint64_t n = 0; n <= t; ++n) {
        set_size(k);
        set_fd(10);
        hist_update(tables[t].data(), spec, hit(), nullptr, 0);
      }
    }
  }
  HistResult result;
  for (const auto& t : tables) ASSERT_TRUE(hist_merge(result, t.data(), t.size() * 8, spec));
  ASSERT_EQ(result.entries.size(), 7u);  // keys 0..6
  const uint64_t expected[] = {1, 3, 6, 6, 6, 5, 3};
  for (uint64_t k = 0; k < 7; ++k) {
    const HistEntry* e = find_number(result, k);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->hitcount, expected[k]) << k;
    EXPECT_EQ(e->vals[0], 10 * expected[k]) << k;
  }
  EXPECT_EQ(result.hits, 30u);
  EXPECT_EQ(result.dropped, 0u);
}

// Another process's merged hist adds to a total as its tables would have:
// equal keys summed, keys past `size` dropped with their hits.
TEST_F(HistTableTest, MergedResultsAddUpAsTheirTablesWould) {
  HistSpec spec;
  spec.keys = {key("size")};
  spec.size = kHistSizeMin;
  std::vector<std::vector<uint64_t>> tables(2, table_for(spec));
  // Table 0: keys 0..99 once; table 1: keys 50..199 twice.
  for (uint64_t k = 0; k < 200; ++k) {
    set_size(k);
    if (k < 100) hist_update(tables[0].data(), spec, hit(), nullptr, 0);
    if (k >= 50) {
      hist_update(tables[1].data(), spec, hit(), nullptr, 0);
      hist_update(tables[1].data(), spec, hit(), nullptr, 0);
    }
  }
  HistResult by_tables;
  for (const auto& t : tables) ASSERT_TRUE(hist_merge(by_tables, t.data(), t.size() * 8, spec));
  HistResult total;
  for (const auto& t : tables) hist_merge_result(total, merge(spec, t), spec);
  ASSERT_EQ(total.entries.size(), by_tables.entries.size());
  for (size_t i = 0; i < total.entries.size(); ++i) {
    EXPECT_EQ(total.entries[i].keys, by_tables.entries[i].keys) << i;
    EXPECT_EQ(total.entries[i].hitcount, by_tables.entries[i].hitcount) << i;
  }
  EXPECT_EQ(total.entries.size(), kHistSizeMin);
  EXPECT_EQ(total.hits, by_tables.hits);
  EXPECT_EQ(total.dropped, by_tables.dropped);
  EXPECT_EQ(total.hits + total.dropped, 100u + 2 * 150u);
}

TEST_F(HistTableTest, MergeCapsDistinctKeysAtSize) {
  HistSpec spec;
  spec.keys = {key("size")};
  spec.size = kHistSizeMin;
  // Two tables of 100 keys each, 50 of them shared: 150 distinct keys.
  std::vector<std::vector<uint64_t>> tables(2, table_for(spec));
  for (uint64_t t = 0; t < 2; ++t) {
    for (uint64_t k = 50 * t; k < 50 * t + 100; ++k) {
      set_size(k);
      hist_update(tables[t].data(), spec, hit(), nullptr, 0);
      hist_update(tables[t].data(), spec, hit(), nullptr, 0);
    }
  }
  HistResult result;
  for (const auto& t : tables) ASSERT_TRUE(hist_merge(result, t.data(), t.size() * 8, spec));
  EXPECT_EQ(result.entries.size(), kHistSizeMin);
  // Keys 128..149 came when 128 were held: their 2 hits each are dropped.
  EXPECT_EQ(result.dropped, 2u * 22);
  EXPECT_EQ(result.hits + result.dropped, 400u);
  EXPECT_EQ(find_number(result, 60)->hitcount, 4u);
  EXPECT_EQ(find_number(result, 130), nullptr);
}

TEST_F(HistTableTest, MergeRefusesTablesOfAnotherShape) {
  HistSpec spec;
  spec.keys = {key("size")};
  auto table = table_for(spec);
  set_size(1);
  hist_update(table.data(), spec, hit(), nullptr, 0);
  HistResult result;
  EXPECT_FALSE(hist_merge(result, table.data(), table.size() * 8 - 8, spec));  // too small
  EXPECT_FALSE(hist_merge(result, nullptr, table.size() * 8, spec));
  HistSpec other = spec;
  other.vals = {key("fd")};
  std::vector<uint64_t> big(hist_table_bytes(other) / 8);
  std::memcpy(big.data(), table.data(), table.size() * 8);
  EXPECT_FALSE(hist_merge(result, big.data(), big.size() * 8, other));  // written for `spec`
  EXPECT_TRUE(result.entries.empty());
}

TEST_F(HistTableTest, InvalidSpecWritesNothing) {
  HistSpec spec;
  spec.keys = {key("size")};
  std::vector<uint64_t> table(hist_table_bytes(spec) / 8, 0);
  spec.size = 3000;
  hist_update(table.data(), spec, hit(), nullptr, 0);
  for (uint64_t word : table) ASSERT_EQ(word, 0u);
}

// The traced program can write anything into its tables: merging garbage
// must stay inside the table and give at most `size` entries.
TEST_F(HistTableTest, GarbageTablesDoNotCrash) {
  HistSpec strings;
  strings.keys = {key("name"), key("common_pid", kHistExecname)};
  strings.vals = {key("size")};
  strings.size = kHistSizeMin;
  HistSpec stacks;
  stacks.keys = {stack_key(), key("comm"), key("fd")};
  stacks.size = kHistSizeMin;
  std::mt19937_64 random(15);
  for (const HistSpec& spec : {strings, stacks}) {
    const uint64_t bytes = hist_table_bytes(spec);
    ASSERT_NE(bytes, 0u);
    for (int round = 0; round < 50; ++round) {
      std::vector<uint64_t> table(bytes / 8);
      for (uint64_t& word : table) word = random();
      auto* header = reinterpret_cast<HistTableHeader*>(table.data());
      if (round % 2 == 0) {  // a plausible header, garbage entries
        header->size = spec.size;
        header->entry_bytes = spec.entry_bytes();
        header->used = round % 4 == 0 ? UINT64_MAX : random() % 200;
      }
      HistResult result;
      EXPECT_EQ(hist_merge(result, table.data(), bytes, spec), round % 2 == 0);
      EXPECT_LE(result.entries.size(), spec.size);
      for (const HistEntry& e : result.entries) {
        for (const HistKeyValue& k : e.keys) {
          EXPECT_LE(k.text.size(), kHistStringBytes);
          EXPECT_LE(k.frames.size(), kHistStackDepth);
        }
        EXPECT_LE(e.comm.size(), kHistCommBytes);
      }
      // And the writer keeps to its table when the program scribbled on it.
      set_size(static_cast<uint64_t>(round));
      set_name("x");
      const uint64_t frames[] = {1, 2, 3};
      hist_update(table.data(), spec, hit(), frames, 3);
    }
  }
}

}  // namespace
}  // namespace dprobe::trace
