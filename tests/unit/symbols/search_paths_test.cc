// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "symbols/search_paths.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fixture_build.h"

namespace dprobe::symbols {
namespace {

using ::testing::ElementsAre;

TEST(SearchPathsTest, LdSoConfFollowsIncludesAndSkipsComments) {
  const auto& fx = test_support::fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  const std::string dir = fx.root + "/etc";
  std::filesystem::create_directories(dir + "/ld.so.conf.d");
  std::ofstream(dir + "/ld.so.conf") << "# top\n/first/dir/  # trailing comment\n"
                                     << "include ld.so.conf.d/*.conf\n"
                                     << "include /nowhere/*.conf\n\n/last\n";
  std::ofstream(dir + "/ld.so.conf.d/b.conf") << "/from/b\n";
  std::ofstream(dir + "/ld.so.conf.d/a.conf") << "  /from/a\n# only a comment\n";
  std::ofstream(dir + "/ld.so.conf.d/ignored.txt") << "/not/included\n";
  EXPECT_THAT(read_ld_so_conf(dir + "/ld.so.conf"),
              ElementsAre("/first/dir", "/from/a", "/from/b", "/last"));
}

TEST(SearchPathsTest, SelfIncludeTerminates) {
  const auto& fx = test_support::fixture();
  ASSERT_TRUE(fx.ok) << fx.error;
  const std::string conf = fx.root + "/loop.conf";
  std::ofstream(conf) << "/d\ninclude " << conf << "\n";
  EXPECT_FALSE(read_ld_so_conf(conf).empty());
}

TEST(SearchPathsTest, MissingConfIsEmpty) {
  EXPECT_TRUE(read_ld_so_conf("/nonexistent/ld.so.conf").empty());
}

TEST(SearchPathsTest, LibraryPathSplitsLikeLdSo) {
  EXPECT_THAT(parse_library_path("/a:/b/;/c::"), ElementsAre("/a", "/b", "/c", ".", "."));
  EXPECT_TRUE(parse_library_path("").empty());
}

TEST(SearchPathsTest, DefaultsUseHostMultiarch) {
  const std::string multiarch(host_multiarch());
  EXPECT_THAT(default_library_dirs(), ElementsAre("/lib/" + multiarch, "/usr/lib/" + multiarch,
                                                  "/lib64", "/usr/lib64", "/lib", "/usr/lib"));
}

TEST(SearchPathsTest, HostPathsEndWithDefaults) {
  const SearchPaths paths = SearchPaths::from_host();
  EXPECT_THAT(paths.system_dirs, ::testing::Contains("/usr/lib"));
  EXPECT_THAT(paths.system_dirs, ::testing::Contains("/lib/" + std::string(host_multiarch())));
}

}  // namespace
}  // namespace dprobe::symbols
