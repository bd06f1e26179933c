// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// jitdump files (perf's binary JIT map, node --perf-prof): code loads name
// ranges, code moves carry a name on, a record still being written waits,
// a file that is no jitdump names nothing; and a PerfMap reading one as it
// grows.
#include "cli/output/jit_dump.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

#include "support/files.h"

namespace dprobe::cli {
namespace {

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

std::string header() {
  std::string out;
  put<uint32_t>(out, kJitDumpMagic);
  put<uint32_t>(out, 1);   // version
  put<uint32_t>(out, 40);  // header size
  put<uint32_t>(out, 62);  // EM_X86_64
  put<uint32_t>(out, 0);
  put<uint32_t>(out, 4242);  // pid
  put<uint64_t>(out, 0);     // timestamp
  put<uint64_t>(out, 0);     // flags
  return out;
}

std::string code_load(uint64_t address, uint64_t size, const std::string& name) {
  std::string body;
  put<uint32_t>(body, 4242);
  put<uint32_t>(body, 4242);
  put<uint64_t>(body, address);  // vma
  put<uint64_t>(body, address);  // code address
  put<uint64_t>(body, size);
  put<uint64_t>(body, 1);  // code index
  body += name;
  body.push_back('\0');
  body.append(size, '\xcc');  // the code itself
  std::string out;
  put<uint32_t>(out, 0);
  put<uint32_t>(out, static_cast<uint32_t>(16 + body.size()));
  put<uint64_t>(out, 1);
  return out + body;
}

std::string code_move(uint64_t from, uint64_t to, uint64_t size) {
  std::string out;
  put<uint32_t>(out, 1);
  put<uint32_t>(out, 16 + 48);
  put<uint64_t>(out, 2);
  put<uint32_t>(out, 4242);
  put<uint32_t>(out, 4242);
  put<uint64_t>(out, to);  // vma
  put<uint64_t>(out, from);
  put<uint64_t>(out, to);
  put<uint64_t>(out, size);
  put<uint64_t>(out, 1);
  return out;
}

TEST(JitDump, CodeLoadsNameTheirRanges) {
  const std::string file = header() + code_load(0x1000, 0x40, "JS:*hot a.js:2:17") +
                           code_load(0x2000, 0x10, "Builtin:Stub");
  ASSERT_EQ(jitdump_header_size(file), 40u);
  PerfMapTable table;
  EXPECT_EQ(add_jitdump_records(std::string_view(file).substr(40), table), file.size() - 40);
  auto hit = table.find(0x1010);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->name, "JS:*hot a.js:2:17");
  EXPECT_EQ(hit->offset, 0x10u);
  EXPECT_EQ(hit->size, 0x40u);
  EXPECT_FALSE(table.find(0x1040));
  EXPECT_TRUE(table.find(0x200f));
}

TEST(JitDump, ARecordBeingWrittenWaitsAndAMoveCarriesTheName) {
  const std::string whole = code_load(0x1000, 0x40, "JS:^f b.js:1:1");
  const std::string records = whole + code_move(0x1000, 0x5000, 0x40);
  PerfMapTable table;
  // Cut inside the move record: only the load is taken.
  EXPECT_EQ(add_jitdump_records(std::string_view(records).substr(0, records.size() - 5), table),
            whole.size());
  EXPECT_FALSE(table.find(0x5000));
  EXPECT_EQ(add_jitdump_records(std::string_view(records).substr(whole.size()), table), 64u);
  auto moved = table.find(0x5008);
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->name, "JS:^f b.js:1:1");
}

TEST(JitDump, NoJitdumpNamesNothing) {
  EXPECT_EQ(jitdump_header_size("not a jitdump at all, but long enough to hold a header."), 0u);
  EXPECT_EQ(jitdump_header_size(header().substr(0, 20)), 0u);
  // A record shorter than its own header: nothing from it on is believed.
  std::string broken;
  put<uint32_t>(broken, 0);
  put<uint32_t>(broken, 4);
  put<uint64_t>(broken, 0);
  PerfMapTable table;
  EXPECT_EQ(add_jitdump_records(broken + code_load(0x1000, 0x10, "x"), table), 0u);
  EXPECT_EQ(table.size(), 0u);
}

TEST(JitDump, APerfMapReadsTheDumpAsItGrows) {
  support::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("jit-4242.dump");
  {
    std::ofstream out(path, std::ios::binary);
    out << header() << code_load(0x1000, 0x40, "JS:first a.js:1:1");
  }
  PerfMap map(dir.path(), "perf-4242.map", 4242);
  ASSERT_TRUE(map.use_jitdump(path));
  ASSERT_TRUE(map.find(0x1001));
  EXPECT_EQ(map.find(0x1001)->name, "JS:first a.js:1:1");
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << code_load(0x3000, 0x20, "JS:second a.js:5:1");
  }
  map.refresh();
  ASSERT_TRUE(map.find(0x3004));
  EXPECT_EQ(map.find(0x3004)->name, "JS:second a.js:5:1");
  EXPECT_FALSE(map.use_jitdump(dir.file("missing.dump")));
}

}  // namespace
}  // namespace dprobe::cli
