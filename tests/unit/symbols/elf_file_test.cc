// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/elf_file.h"

#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "fixture_build.h"

namespace dprobe::symbols {
namespace {

using test_support::fixture;
using test_support::host_libc;
using test_support::kSqlite3;
using ::testing::ElementsAre;

ElfFile open_or_die(const std::string& path) {
  auto elf = ElfFile::open(path);
  EXPECT_TRUE(elf.has_value()) << path << ": " << (elf ? "" : elf.error().detail);
  if (!elf) std::abort();
  return std::move(*elf);
}

std::vector<FunctionSymbol> named(const std::vector<FunctionSymbol>& all, std::string_view name) {
  std::vector<FunctionSymbol> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out),
               [&](const FunctionSymbol& f) { return f.name == name; });
  return out;
}

uint16_t host_machine() {
#if defined(__aarch64__)
  return EM_AARCH64;
#else
  return EM_X86_64;
#endif
}

TEST(ElfFileTest, LibcHeaders) {
  const ElfFile libc = open_or_die(host_libc());
  EXPECT_EQ(libc.soname(), "libc.so.6");
  EXPECT_EQ(libc.machine(), host_machine());
  EXPECT_TRUE(libc.is_dynamic());
  EXPECT_TRUE(libc.is_64bit());
}

TEST(ElfFileTest, LibcExportsMallocAndOpendirWithSizes) {
  const std::vector<FunctionSymbol> functions = open_or_die(host_libc()).functions();
  for (const char* name : {"malloc", "opendir", "free"}) {
    const std::vector<FunctionSymbol> hits = named(functions, name);
    ASSERT_EQ(hits.size(), 1u) << name;
    EXPECT_GT(hits[0].size, 0u) << name;
    EXPECT_TRUE(hits[0].is_global) << name;
  }
}

TEST(ElfFileTest, NamesCarryNoSymbolVersion) {
  for (const FunctionSymbol& f : open_or_die(host_libc()).functions()) {
    ASSERT_EQ(f.name.find('@'), std::string::npos) << f.name;
  }
}

TEST(ElfFileTest, LibcHasIfuncs) {
  const std::vector<FunctionSymbol> functions = open_or_die(host_libc()).functions();
  EXPECT_TRUE(std::any_of(functions.begin(), functions.end(),
                          [](const FunctionSymbol& f) { return f.is_ifunc; }));
}

TEST(ElfFileTest, FunctionsSortedByAddressThenName) {
  const std::vector<FunctionSymbol> functions = open_or_die(host_libc()).functions();
  ASSERT_GT(functions.size(), 1000u);
  for (size_t i = 1; i < functions.size(); ++i) {
    const FunctionSymbol& a = functions[i - 1];
    const FunctionSymbol& b = functions[i];
    ASSERT_TRUE(a.address < b.address || (a.address == b.address && a.name < b.name))
        << a.name << " then " << b.name;
  }
}

TEST(ElfFileTest, FileOffsetAndVaddrAreInverses) {
  const ElfFile libc = open_or_die(host_libc());
  const std::vector<FunctionSymbol> malloc_hits = named(libc.functions(), "malloc");
  ASSERT_EQ(malloc_hits.size(), 1u);
  const uint64_t vaddr = malloc_hits[0].address + 5;
  const std::optional<uint64_t> offset = libc.file_offset_of(vaddr);
  ASSERT_TRUE(offset.has_value());
  EXPECT_EQ(libc.vaddr_of_file_offset(*offset), vaddr);
  EXPECT_TRUE(libc.is_executable_vaddr(vaddr));
  for (const LoadSegment& s : libc.segments()) {
    EXPECT_EQ(libc.file_offset_of(s.vaddr), s.offset);
    EXPECT_EQ(libc.vaddr_of_file_offset(s.offset + s.file_size - 1), s.vaddr + s.file_size - 1);
  }
}

TEST(ElfFileTest, AddressesOutsideTheFileHaveNoOffset) {
  const ElfFile libc = open_or_die(host_libc());
  uint64_t end = 0;
  for (const LoadSegment& s : libc.segments()) end = std::max(end, s.vaddr + s.mem_size);
  EXPECT_FALSE(libc.file_offset_of(end + 0x100000).has_value());
  EXPECT_FALSE(libc.is_executable_vaddr(end + 0x100000));
  EXPECT_FALSE(libc.vaddr_of_file_offset(std::filesystem::file_size(host_libc())).has_value());
}

TEST(ElfFileTest, Sqlite3NeedsLibsqlite) {
  if (!std::filesystem::exists(kSqlite3)) GTEST_SKIP() << kSqlite3 << " is not installed";
  const ElfFile sqlite = open_or_die(kSqlite3);
  EXPECT_THAT(sqlite.needed(), ::testing::Contains("libsqlite3.so.0"));
  EXPECT_THAT(sqlite.needed(), ::testing::Contains("libc.so.6"));
  EXPECT_THAT(sqlite.interpreter(), ::testing::HasSubstr("ld-linux"));
  EXPECT_TRUE(sqlite.soname().empty());
}

TEST(ElfFileTest, FixtureDynamicSection) {
  const auto& fx = fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  const ElfFile app = open_or_die(fx.app);
  EXPECT_THAT(app.needed(), ElementsAre("libfix.so.1", "libc.so.6"));
  EXPECT_TRUE(app.has_runpath());
  EXPECT_THAT(app.runpath(), ElementsAre(fx.root + "/lib"));
  EXPECT_TRUE(app.rpath().empty());
  EXPECT_FALSE(app.interpreter().empty());

  const ElfFile rpath_app = open_or_die(fx.app_rpath);
  EXPECT_FALSE(rpath_app.has_runpath());
  EXPECT_THAT(rpath_app.rpath(), ElementsAre(fx.root + "/rp/../lib"));

  const ElfFile lib = open_or_die(fx.lib);
  EXPECT_EQ(lib.soname(), "libfix.so.1");
  EXPECT_TRUE(lib.interpreter().empty());
}

TEST(ElfFileTest, FixtureFunctionsMergeSymtabAndDynsym) {
  const auto& fx = fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  const std::vector<FunctionSymbol> functions = open_or_die(fx.lib).functions();
  const std::vector<FunctionSymbol> call_a = named(functions, "call_a");
  ASSERT_EQ(call_a.size(), 1u);  // in both .symtab and .dynsym, listed once
  EXPECT_TRUE(call_a[0].is_global);
  EXPECT_GT(call_a[0].size, 0u);

  const std::vector<FunctionSymbol> helpers = named(functions, "helper");
  ASSERT_EQ(helpers.size(), 2u);
  EXPECT_NE(helpers[0].address, helpers[1].address);
  EXPECT_FALSE(helpers[0].is_global);

  const std::vector<FunctionSymbol> picked = named(functions, "picked");
  ASSERT_EQ(picked.size(), 1u);
  EXPECT_TRUE(picked[0].is_ifunc);
  EXPECT_TRUE(named(functions, "fixture_counter").empty());
  EXPECT_EQ(named(functions, "local_impl")[0].address, named(functions, "public_entry")[0].address);
}

TEST(ElfFileTest, StrippedLibraryKeepsOnlyExports) {
  const auto& fx = fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  const std::vector<FunctionSymbol> functions = open_or_die(fx.stripped).functions();
  EXPECT_EQ(named(functions, "call_a").size(), 1u);
  EXPECT_EQ(named(functions, "public_entry").size(), 1u);
  EXPECT_TRUE(named(functions, "helper").empty());
  EXPECT_TRUE(named(functions, "local_impl").empty());
}

TEST(ElfFileTest, OpenErrors) {
  const auto& fx = fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  const std::string text = fx.root + "/notes.txt";
  std::ofstream(text) << "not an ELF file\n";
  const std::string empty = fx.root + "/empty";
  std::ofstream{empty};

  auto missing = ElfFile::open(fx.root + "/nope.so");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, LookupError::Kind::kFileNotFound);
  EXPECT_THAT(missing.error().detail, ::testing::HasSubstr("nope.so"));

  auto directory = ElfFile::open(fx.root);
  ASSERT_FALSE(directory.has_value());
  EXPECT_EQ(directory.error().kind, LookupError::Kind::kNotRegularFile);

  for (const std::string& path : {text, empty}) {
    auto not_elf = ElfFile::open(path);
    ASSERT_FALSE(not_elf.has_value()) << path;
    EXPECT_EQ(not_elf.error().kind, LookupError::Kind::kNotElf) << path;
  }
}

TEST(ElfFileTest, MovedFileStaysUsable) {
  ElfFile first = open_or_die(host_libc());
  ElfFile second = std::move(first);
  EXPECT_EQ(second.soname(), "libc.so.6");
  EXPECT_FALSE(second.functions().empty());
  first = std::move(second);
  EXPECT_FALSE(first.functions().empty());
}

TEST(ElfFileTest, ExpandSearchPath) {
  EXPECT_THAT(expand_search_path("$ORIGIN/lib:${ORIGIN}/../x::/abs", "/opt/app"),
              ElementsAre("/opt/app/lib", "/opt/app/../x", "/abs"));
  EXPECT_THAT(expand_search_path("$ORIGINAL/lib", "/o"), ElementsAre("$ORIGINAL/lib"));
  EXPECT_TRUE(expand_search_path("", "/o").empty());
}

}  // namespace
}  // namespace dprobe::symbols
