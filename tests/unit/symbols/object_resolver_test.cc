// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/object_resolver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "fixture_build.h"
#include "symbols/elf_file.h"

namespace dprobe::symbols {
namespace {

namespace fs = std::filesystem;
using Kind = LookupError::Kind;
using test_support::Fixture;
using test_support::fixture;
using test_support::hermetic_paths;
using test_support::host_libc;
using test_support::kSqlite3;

// The same file, however the resolver spelled its path.
::testing::AssertionResult same_file(const Result<std::string, LookupError>& got,
                                     const std::string& want) {
  if (!got) return ::testing::AssertionFailure() << "error: " << got.error().detail;
  std::error_code ec;
  if (fs::equivalent(*got, want, ec)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << *got << " is not " << want;
}

class ResolverTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fx.ok) << fx.error; }
  const Fixture& fx = fixture();
};

TEST_F(ResolverTest, FindsNeededLibraryBySonameThroughOriginRunpath) {
  const ObjectResolver resolver(fx.app, hermetic_paths());
  auto lib = resolver.resolve("libfix.so.1");
  EXPECT_TRUE(same_file(lib, fx.lib));
  EXPECT_EQ(*lib, fx.root + "/lib/libfix.so.1");  // the name ld.so opens, not the target
}

// A library by its name alone, as bpftrace takes it: the program's one of
// that name with a version; nothing when there is none.
TEST_F(ResolverTest, FindsNeededLibraryByItsNameWithoutVersion) {
  const ObjectResolver resolver(fx.app, hermetic_paths());
  EXPECT_TRUE(same_file(resolver.resolve("libfix"), fx.lib));
  EXPECT_FALSE(resolver.resolve("libfi").has_value()) << "a name, not a prefix";
}

// Without a program, the search path's only versioned file of the name.
TEST(ResolverShortNames, TheSearchPathsLibcByItsName) {
  const ObjectResolver resolver("");
  EXPECT_TRUE(same_file(resolver.resolve("libc"), host_libc()));
}

TEST_F(ResolverTest, FindsNeededLibraryByRealBasename) {
  const ObjectResolver resolver(fx.app, hermetic_paths());
  EXPECT_TRUE(same_file(resolver.resolve("libfix.so.1.0"), fx.lib));
}

TEST_F(ResolverTest, FindsTheExecutableByBasename) {
  const ObjectResolver resolver(fx.app_rpath, hermetic_paths());
  EXPECT_TRUE(same_file(resolver.resolve("app"), fx.app_rpath));
}

TEST_F(ResolverTest, LibraryPathComesBeforeRunpath) {
  const ObjectResolver resolver(fx.app, hermetic_paths({fx.root + "/decoy"}));
  EXPECT_TRUE(same_file(resolver.resolve("libfix.so.1"), fx.stripped));
}

TEST_F(ResolverTest, RpathComesBeforeLibraryPath) {
  const ObjectResolver resolver(fx.app_rpath, hermetic_paths({fx.root + "/decoy"}));
  EXPECT_TRUE(same_file(resolver.resolve("libfix.so.1"), fx.lib));
}

TEST_F(ResolverTest, SystemDirsAreSearchedLastAndForeignIsaSkipped) {
  const ObjectResolver resolver(fx.app_plain,
                                hermetic_paths({}, {fx.root + "/wrongarch", fx.root + "/lib"}));
  EXPECT_TRUE(same_file(resolver.resolve("libfix.so.1"), fx.lib));
}

TEST_F(ResolverTest, NotNeededLibraryIsFoundInSearchDirs) {
  const ObjectResolver resolver(fx.app, hermetic_paths({}, {fx.root + "/plugins"}));
  EXPECT_TRUE(same_file(resolver.resolve("libplugin.so"), fx.plugin));
}

TEST_F(ResolverTest, WithoutExecutableOnlySearchDirsCount) {
  const ObjectResolver resolver("", hermetic_paths({fx.root + "/plugins"}));
  EXPECT_TRUE(same_file(resolver.resolve("libplugin.so"), fx.plugin));
  auto missing = resolver.resolve("libfix.so.1");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, Kind::kObjectNotFound);
}

TEST_F(ResolverTest, UnknownObject) {
  const ObjectResolver resolver(fx.app, hermetic_paths());
  for (const char* name : {"libnothere.so.3", ""}) {
    auto r = resolver.resolve(name);
    ASSERT_FALSE(r.has_value()) << name;
    EXPECT_EQ(r.error().kind, Kind::kObjectNotFound) << name;
  }
}

TEST_F(ResolverTest, PathsAreTakenAsTheyAre) {
  const ObjectResolver resolver(fx.app, hermetic_paths());
  auto direct = resolver.resolve(fx.plugin);
  ASSERT_TRUE(direct.has_value());
  EXPECT_EQ(*direct, fx.plugin);

  auto missing = resolver.resolve(fx.root + "/lib/libgone.so");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, Kind::kFileNotFound);

  auto directory = resolver.resolve(fx.root + "/lib");
  ASSERT_FALSE(directory.has_value());
  EXPECT_EQ(directory.error().kind, Kind::kNotRegularFile);
}

TEST_F(ResolverTest, MissingExecutableIsReported) {
  const ObjectResolver resolver(fx.root + "/no-such-app", hermetic_paths());
  auto r = resolver.resolve("libfix.so.1");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Kind::kFileNotFound);
}

TEST(HostResolverTest, Sqlite3Libraries) {
  if (!fs::exists(kSqlite3)) GTEST_SKIP() << kSqlite3 << " is not installed";
  const ObjectResolver resolver(kSqlite3);
  auto sqlite = resolver.resolve("libsqlite3.so.0");
  ASSERT_TRUE(sqlite.has_value()) << sqlite.error().detail;
  auto elf = ElfFile::open(*sqlite);
  ASSERT_TRUE(elf.has_value());
  EXPECT_EQ(elf->soname(), "libsqlite3.so.0");

  EXPECT_TRUE(same_file(resolver.resolve("libc.so.6"), host_libc()));
  // The interpreter is part of every dynamically linked program.
  auto rtld =
      resolver.resolve(fs::path(ElfFile::open(kSqlite3)->interpreter()).filename().string());
  EXPECT_TRUE(rtld.has_value());
}

}  // namespace
}  // namespace dprobe::symbols
