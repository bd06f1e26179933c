// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/lookup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "fixture_build.h"

namespace dprobe::symbols {
namespace {

using Kind = LookupError::Kind;
using test_support::fixture;
using test_support::host_libc;
using ::testing::HasSubstr;

class LookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fixture().ok) << fixture().error;
    auto elf = ElfFile::open(fixture().lib);
    ASSERT_TRUE(elf.has_value());
    elf_.emplace(std::move(*elf));
    table_.emplace(*elf_);
  }

  Result<ResolvedSymbol, LookupError> resolve(std::string_view name, int64_t offset) {
    return resolve_symbol(*elf_, *table_, name, offset);
  }

  std::optional<ElfFile> elf_;
  std::optional<SymbolTable> table_;
};

TEST_F(LookupTest, ResolvesFunctionPlusOffset) {
  auto r = resolve("call_a", 4);
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ(r->sym.name, "call_a");
  EXPECT_EQ(r->address, r->sym.address + 4);
  EXPECT_EQ(elf_->vaddr_of_file_offset(r->file_offset), r->address);
}

TEST_F(LookupTest, AliasesAtOneAddressAreOneFunction) {
  auto r = resolve("public_entry", 0);
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ(r->address, table_->find("local_impl")[0].address);
}

TEST_F(LookupTest, UnknownName) {
  auto r = resolve("no_such_function", 0);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Kind::kSymbolNotFound);
  EXPECT_THAT(r.error().detail, HasSubstr("no_such_function"));
}

TEST_F(LookupTest, AMisspelledNameGetsTheNamesItMayHaveMeant) {
  // One character off, and the case changed: each is suggested.
  auto r = resolve("call_x", 0);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Kind::kSymbolNotFound);
  ASSERT_EQ(r.error().candidates.size(), 1u);
  EXPECT_THAT(r.error().candidates[0], HasSubstr("did you mean call_a"));
  auto upper = resolve("CALL_A", 0);
  ASSERT_FALSE(upper.has_value());
  ASSERT_EQ(upper.error().candidates.size(), 1u);
  EXPECT_THAT(upper.error().candidates[0], HasSubstr("call_a"));
  // Nothing near: no suggestion.
  auto far = resolve("no_such_function", 0);
  ASSERT_FALSE(far.has_value());
  EXPECT_TRUE(far.error().candidates.empty());
}

TEST_F(LookupTest, DataObjectIsNotAFunction) {
  auto r = resolve("fixture_counter", 0);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Kind::kSymbolNotFound);
}

TEST_F(LookupTest, StaticFunctionsSharingANameAreNotUnique) {
  auto r = resolve("helper", 0);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Kind::kNotUnique);
  const auto helpers = table_->find("helper");
  ASSERT_EQ(helpers.size(), 2u);
  EXPECT_THAT(r.error().candidates,
              ::testing::UnorderedElementsAre(::testing::StartsWith(candidate_line(helpers[0])),
                                              ::testing::StartsWith(candidate_line(helpers[1]))));
  // Each names the spelling that probes it alone: PATH:0xOFFSET.
  EXPECT_THAT(r.error().candidates[0],
              ::testing::MatchesRegex("helper@0x[0-9a-f]+ \\(size 0x[0-9a-f]+\\): probe it as "
                                      ".*:0x[0-9a-f]+"));
}

TEST_F(LookupTest, OffsetMustStayInsideTheFunction) {
  const FunctionSymbol& call_b = table_->find("call_b")[0];
  ASSERT_GT(call_b.size, 1u);
  const auto last = static_cast<int64_t>(call_b.size - 1);
  EXPECT_TRUE(resolve("call_b", last).has_value());
  for (int64_t bad : {static_cast<int64_t>(call_b.size), int64_t{-1}, int64_t{1} << 40}) {
    auto r = resolve("call_b", bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().kind, Kind::kOffsetPastEnd) << bad;
  }
}

TEST_F(LookupTest, FunctionInWritableDataIsNotExecutable) {
  auto r = resolve("data_function", 0);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Kind::kNotExecutable);
}

TEST(LookupSizeZeroTest, OffsetZeroOnASizeZeroSymbolIsFine) {
  auto elf = ElfFile::open(host_libc());
  ASSERT_TRUE(elf.has_value());
  const SymbolTable libc_table(*elf);
  const FunctionSymbol& malloc_sym = libc_table.find("malloc")[0];
  // The same address, but as the size-0 symbol an assembler label would give.
  const SymbolTable table({{"label", malloc_sym.address, 0, false, true}});
  auto r = resolve_symbol(*elf, table, "label", 0);
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ(r->address, malloc_sym.address);
  EXPECT_EQ(r->sym.size, 0u);
}

TEST(LookupLibcTest, MallocResolves) {
  auto elf = ElfFile::open(host_libc());
  ASSERT_TRUE(elf.has_value());
  const SymbolTable table(*elf);
  auto r = resolve_symbol(*elf, table, "malloc", 0);
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  EXPECT_EQ(elf->file_offset_of(r->address), r->file_offset);
}

TEST(DescribeTest, EveryKindHasItsOwnMessage) {
  std::set<std::string_view> seen;
  for (Kind kind :
       {Kind::kFileNotFound, Kind::kNotRegularFile, Kind::kNotElf, Kind::kObjectNotFound,
        Kind::kSymbolNotFound, Kind::kNotUnique, Kind::kOffsetPastEnd, Kind::kNotExecutable}) {
    const std::string_view text = describe(kind);
    EXPECT_FALSE(text.empty());
    EXPECT_TRUE(seen.insert(text).second) << text;
  }
  EXPECT_EQ(describe(Kind::kNotUnique), "function name is not unique");
}

}  // namespace
}  // namespace dprobe::symbols
