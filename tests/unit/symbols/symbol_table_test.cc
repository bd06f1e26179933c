// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/symbol_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixture_build.h"

namespace dprobe::symbols {
namespace {

using test_support::fixture;
using test_support::host_libc;

std::vector<std::string> names(const std::vector<const FunctionSymbol*>& functions) {
  std::vector<std::string> out;
  for (const FunctionSymbol* f : functions) out.push_back(f->name);
  return out;
}

// A hand-made table: an outer function with a nested label, a global and a
// local name at one address, and a size-0 symbol.
SymbolTable synthetic_table() {
  return SymbolTable({
      {"outer", 0x1000, 0x100, false, true},
      {"inner_label", 0x1040, 0x10, false, false},
      {"zero_sized", 0x2000, 0, false, true},
      {"local_alias", 0x3000, 0x20, false, false},
      {"__exported", 0x3000, 0x20, false, true},
      {"exported", 0x3000, 0x20, false, true},
      {"dup", 0x4000, 0x8, false, false},
      {"dup", 0x5000, 0x8, false, false},
  });
}

TEST(SymbolTableTest, FindReturnsEveryDefinitionOfAName) {
  const SymbolTable table = synthetic_table();
  const auto dups = table.find("dup");
  ASSERT_EQ(dups.size(), 2u);
  EXPECT_EQ(dups[0].address, 0x4000u);
  EXPECT_EQ(dups[1].address, 0x5000u);
  EXPECT_EQ(table.find("outer").size(), 1u);
  EXPECT_TRUE(table.find("out").empty());
  EXPECT_TRUE(table.find("").empty());
}

TEST(SymbolTableTest, MatchIsSortedByName) {
  const SymbolTable table = synthetic_table();
  EXPECT_THAT(
      names(table.match("*e*")),
      ::testing::ElementsAre("__exported", "exported", "inner_label", "outer", "zero_sized"));
  EXPECT_THAT(names(table.match("d?p")), ::testing::ElementsAre("dup", "dup"));
  EXPECT_THAT(names(table.match("exported")), ::testing::ElementsAre("exported"));
  EXPECT_TRUE(table.match("nothing*").empty());
}

TEST(SymbolTableTest, SymbolizeInsideAndAtEnd) {
  const SymbolTable table = synthetic_table();
  auto hit = table.symbolize(0x10ff);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->function->name, "outer");
  EXPECT_EQ(hit->offset, 0xffu);
  EXPECT_FALSE(table.symbolize(0x1100).has_value());  // one past the end
  EXPECT_FALSE(table.symbolize(0xfff).has_value());
}

TEST(SymbolTableTest, SymbolizePrefersInnermostFunction) {
  const SymbolTable table = synthetic_table();
  auto inner = table.symbolize(0x1044);
  ASSERT_TRUE(inner.has_value());
  EXPECT_EQ(inner->function->name, "inner_label");
  EXPECT_EQ(inner->offset, 4u);
  auto after_inner = table.symbolize(0x1050);  // past the label, still in outer
  ASSERT_TRUE(after_inner.has_value());
  EXPECT_EQ(after_inner->function->name, "outer");
}

TEST(SymbolTableTest, SizeZeroSymbolOnlyMatchesItsAddress) {
  const SymbolTable table = synthetic_table();
  auto exact = table.symbolize(0x2000);
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->function->name, "zero_sized");
  EXPECT_EQ(exact->offset, 0u);
  EXPECT_FALSE(table.symbolize(0x2001).has_value());
}

TEST(SymbolTableTest, SymbolizePrefersGlobalThenFewerUnderscores) {
  const SymbolTable table = synthetic_table();
  auto hit = table.symbolize(0x3008);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->function->name, "exported");
  EXPECT_EQ(hit->offset, 8u);
}

TEST(SymbolTableTest, LibcMallocSymbolizes) {
  auto elf = ElfFile::open(host_libc());
  ASSERT_TRUE(elf.has_value());
  const SymbolTable table(*elf);
  const auto malloc_hits = table.find("malloc");
  ASSERT_EQ(malloc_hits.size(), 1u);
  auto hit = table.symbolize(malloc_hits[0].address + 3);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->function->name, "malloc");  // not its alias __libc_malloc
  EXPECT_EQ(hit->offset, 3u);
}

TEST(SymbolTableTest, LibcGlob) {
  auto elf = ElfFile::open(host_libc());
  ASSERT_TRUE(elf.has_value());
  const std::vector<std::string> hits = names(SymbolTable(*elf).match("str*cmp"));
  EXPECT_THAT(hits, ::testing::Contains("strcmp"));
  EXPECT_THAT(hits, ::testing::Contains("strncmp"));
  EXPECT_THAT(hits, ::testing::Not(::testing::Contains("memcmp")));
  EXPECT_TRUE(std::is_sorted(hits.begin(), hits.end()));
}

TEST(SymbolTableTest, FixtureAliasSymbolizesToGlobalName) {
  const auto& fx = fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  auto elf = ElfFile::open(fx.lib);
  ASSERT_TRUE(elf.has_value());
  const SymbolTable table(*elf);
  ASSERT_EQ(table.find("local_impl").size(), 1u);
  auto hit = table.symbolize(table.find("local_impl")[0].address + 1);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->function->name, "public_entry");
  EXPECT_EQ(table.find("helper").size(), 2u);
}

}  // namespace
}  // namespace dprobe::symbols
