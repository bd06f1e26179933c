// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The perf map reader: its lines (node's, the JVM's), the lines that are
// none, which entry an address falls in at the edges of a range, a later
// entry replacing the ones it overlaps, and the file read again as it
// grows, is written anew, or is not there yet.
#include "cli/output/perf_map.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "support/files.h"

namespace dprobe::cli {
namespace {

TEST(PerfMap, ParsesWellFormedLines) {
  auto line = parse_perf_map_line("3ef414c0 398 RegExp:[{(]");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->start, 0x3ef414c0u);
  EXPECT_EQ(line->size, 0x398u);
  EXPECT_EQ(line->name, "RegExp:[{(]");
  // node 20's, its name with spaces; the JVM's, upper-case hex.
  line = parse_perf_map_line("7f3b2c04d3c0 588 JS:*hotStat /tmp/x/hot.js:2:17");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->start, 0x7f3b2c04d3c0u);
  EXPECT_EQ(line->name, "JS:*hotStat /tmp/x/hot.js:2:17");
  line =
      parse_perf_map_line("0x00007f3600ec8540 0x00000000000001c8 int Hot.hot(java.io.File, int)");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->start, 0x7f3600ec8540u);
  EXPECT_EQ(line->size, 0x1c8u);
  EXPECT_EQ(line->name, "int Hot.hot(java.io.File, int)");
  line = parse_perf_map_line("7F3B2C04D3C0 1A0 void java.lang.Thread.run()\r");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->start, 0x7f3b2c04d3c0u);
  EXPECT_EQ(line->size, 0x1a0u);
  EXPECT_EQ(line->name, "void java.lang.Thread.run()");
}

TEST(PerfMap, SkipsLinesThatAreNoEntry) {
  for (const char* garbage :
       {"", "   ", "zz 10 f", "10 zz f", "10 10", "10 10 ", "0x 10 f", "10 0xx10 f", "10 0 f",
        "10 0x0 f", "10  f", " 10 10 f", "ffffffffffffffff 2 f", "12345678901234567 1 f",
        "0x12345678901234567 1 f", "-10 10 f"}) {
    EXPECT_FALSE(parse_perf_map_line(garbage)) << '"' << garbage << '"';
  }
  PerfMapTable table;
  const std::string text = "garbage\n1000 10 first\n\nnot hex at all\n2000 20 second\n";
  EXPECT_EQ(table.add_lines(text), text.size());
  EXPECT_EQ(table.size(), 2u);
}

TEST(PerfMap, AnAddressIsInItsRangeFromStartToStartPlusSizeMinusOne) {
  PerfMapTable table;
  table.add({0x1000, 0x40, "f"});
  table.add({0x1040, 0x10, "g"});  // right after f
  EXPECT_FALSE(table.find(0xfff));
  auto hit = table.find(0x1000);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->name, "f");
  EXPECT_EQ(hit->offset, 0u);
  EXPECT_EQ(hit->size, 0x40u);
  hit = table.find(0x103f);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->name, "f");
  EXPECT_EQ(hit->offset, 0x3fu);
  hit = table.find(0x1040);  // START + SIZE: g's, not f's
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->name, "g");
  EXPECT_EQ(hit->offset, 0u);
  EXPECT_FALSE(table.find(0x1050));  // g's START + SIZE: nobody's
}

TEST(PerfMap, LaterEntryWins) {
  PerfMapTable table;
  table.add({0x1000, 0x40, "old"});
  table.add({0x2000, 0x40, "kept"});
  const std::string_view old_name = table.find(0x1000)->name;
  table.add({0x1000, 0x20, "new"});  // the same start
  EXPECT_EQ(table.find(0x1000)->name, "new");
  EXPECT_FALSE(table.find(0x1030));   // old's tail is gone with it
  EXPECT_EQ(old_name, "old");         // a name handed out stays valid
  table.add({0x0ff0, 0x20, "over"});  // begins before new, reaches into it
  EXPECT_EQ(table.find(0x1008)->name, "over");
  EXPECT_EQ(table.find(0x1008)->offset, 0x18u);
  EXPECT_FALSE(table.find(0x1018));
  table.add({0x1f00, 0x200, "wide"});  // covers kept
  EXPECT_EQ(table.find(0x2000)->name, "wide");
  EXPECT_EQ(table.size(), 2u);  // over, wide
  table.add({0x3000, 0x10, "apart"});
  EXPECT_EQ(table.find(0x1000)->name, "over");
  EXPECT_EQ(table.size(), 3u);
}

TEST(PerfMap, AddLinesTakesOnlyCompleteLines) {
  PerfMapTable table;
  EXPECT_EQ(table.add_lines("1000 10 f\n2000 10 g"), 10u);
  EXPECT_TRUE(table.find(0x1000));
  EXPECT_FALSE(table.find(0x2000));
}

class PerfMapFileTest : public ::testing::Test {
 protected:
  void append(const std::string& text) {
    std::FILE* file = std::fopen(path_.c_str(), "a");
    ASSERT_NE(file, nullptr);
    std::fputs(text.c_str(), file);
    std::fclose(file);
  }
  // Past the time a look at the file stands for.
  static void let_time_pass() { std::this_thread::sleep_for(std::chrono::milliseconds(3)); }

  support::TempDir temp_;
  const std::string path_ = temp_.file("perf-42.map");
};

TEST_F(PerfMapFileTest, ReadsTheFileAgainAsItGrows) {
  PerfMap map(temp_.path(), "perf-42.map", 42);
  EXPECT_EQ(map.label(), "[JIT] tid 42");
  EXPECT_FALSE(map.find(0x1000));        // not written yet
  append("1000 10 first\n2000 10 sec");  // the second line half written
  let_time_pass();
  ASSERT_TRUE(map.find(0x1000));
  EXPECT_EQ(map.find(0x1000)->name, "first");
  EXPECT_FALSE(map.find(0x2000));
  append("ond\n1000 10 moved\n");
  let_time_pass();
  ASSERT_TRUE(map.find(0x2000));
  EXPECT_EQ(map.find(0x2000)->name, "second");
  // 0x1000 was found before: it is only looked up again on a refresh.
  map.refresh();
  EXPECT_EQ(map.find(0x1000)->name, "moved");
}

TEST_F(PerfMapFileTest, AFileWrittenAnewIsReadFromItsStart) {
  append("1000 10 first\n2000 10 second\n");
  PerfMap map(temp_.path(), "perf-42.map", 42);
  map.refresh();
  ASSERT_TRUE(map.find(0x2000));
  // jcmd Compiler.perfmap writes the file again: fewer lines, another file.
  const std::string fresh = temp_.file("fresh");
  {
    std::FILE* file = std::fopen(fresh.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("3000 10 third\n", file);
    std::fclose(file);
  }
  ASSERT_EQ(std::rename(fresh.c_str(), path_.c_str()), 0);
  map.refresh();
  EXPECT_FALSE(map.find(0x2000));
  ASSERT_TRUE(map.find(0x3000));
  EXPECT_EQ(map.find(0x3000)->name, "third");
}

TEST_F(PerfMapFileTest, ALinkInPlaceOfTheFileIsNotFollowed) {
  const std::string real = temp_.file("real.map");
  {
    std::FILE* file = std::fopen(real.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("1000 10 f\n", file);
    std::fclose(file);
  }
  ASSERT_EQ(::symlink(real.c_str(), path_.c_str()), 0);
  PerfMap map(temp_.path(), "perf-42.map", 42);
  map.refresh();
  EXPECT_FALSE(map.find(0x1000));
  PerfMap direct(temp_.path(), "real.map", 42);
  EXPECT_TRUE(direct.find(0x1000));
}

}  // namespace
}  // namespace dprobe::cli
