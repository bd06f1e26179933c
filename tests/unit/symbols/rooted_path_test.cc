// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Paths in another process's root: which paths name one, how a path the
// process sees becomes one dprobe opens, symlinks resolved from that root
// and never from ours; and an executable named through /proc/PID/root
// whose libraries are found in that root.
#include "symbols/rooted_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "symbols/object_resolver.h"
#include "symbols/search_paths.h"

namespace dprobe::symbols {
namespace {

namespace fs = std::filesystem;

TEST(RootedPath, OnlyAProcesssRootIsOne) {
  EXPECT_EQ(root_of("/proc/1234/root/app"), "/proc/1234/root");
  EXPECT_EQ(root_of("/proc/1234/root"), "/proc/1234/root");
  EXPECT_EQ(root_of("/proc/self/root/app"), "") << "self is ours";
  EXPECT_EQ(root_of("/proc/1234/rootfs/app"), "");
  EXPECT_EQ(root_of("/proc/1234/exe"), "");
  EXPECT_EQ(root_of("/proc//root/app"), "");
  EXPECT_EQ(root_of("/usr/bin/ls"), "");
}

TEST(RootedPath, APathGoesBelowTheRootOnce) {
  EXPECT_EQ(under_root("/proc/9/root", "/lib/libc.so.6"), "/proc/9/root/lib/libc.so.6");
  EXPECT_EQ(under_root("/proc/9/root", "/proc/9/root/lib/libc.so.6"), "/proc/9/root/lib/libc.so.6");
  EXPECT_EQ(under_root("/proc/9/root", "/proc/9/rootless"), "/proc/9/root/proc/9/rootless");
  EXPECT_EQ(under_root("", "/lib/libc.so.6"), "/lib/libc.so.6");
  EXPECT_EQ(under_root("/proc/9/root", "lib/relative"), "lib/relative");
}

class RootedLinks : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rooted_path_test." + std::to_string(::getpid()));
    fs::create_directories(root_ / "lib/real");
    fs::create_directories(root_ / "usr");
    std::FILE* file = std::fopen((root_ / "lib/real/libfoo.so.1").c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fclose(file);
    // Absolute links, as a container's files have them: from its root.
    fs::create_symlink("/lib/real/libfoo.so.1", root_ / "lib/libfoo.so");
    fs::create_symlink("/lib", root_ / "usr/lib");
    fs::create_symlink("../../../../../../../lib/real", root_ / "lib/up");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(RootedLinks, AnAbsoluteLinkStartsFromTheProcesssRoot) {
  const std::string root = root_.string();
  EXPECT_EQ(canonical_under(root, root + "/lib/libfoo.so"), root + "/lib/real/libfoo.so.1");
  EXPECT_EQ(canonical_under(root, "/usr/lib/libfoo.so"), root + "/lib/real/libfoo.so.1")
      << "a link in the middle of the path, and the path as the process names it";
  EXPECT_EQ(canonical_under(root, root + "/lib/up/libfoo.so.1"), root + "/lib/real/libfoo.so.1")
      << "'..' never climbs above the root";
  EXPECT_EQ(canonical_under(root, root + "/lib/missing.so"), root + "/lib/missing.so");
}

// Our own process's root, named through /proc/PID/root: the C library
// found for /bin/sh is below it, the file our own loader found.
TEST(RootedResolver, AnExecutableInAProcesssRootFindsItsLibrariesThere) {
  const std::string root = "/proc/" + std::to_string(::getpid()) + "/root";
  const ObjectResolver resolver(root + "/bin/sh");
  auto libc = resolver.resolve("libc.so.6");
  ASSERT_TRUE(libc) << libc.error().detail;
  EXPECT_TRUE(libc->starts_with(root + "/")) << *libc;
  const ObjectResolver ours("/bin/sh");
  auto our_libc = ours.resolve("libc.so.6");
  ASSERT_TRUE(our_libc);
  EXPECT_TRUE(fs::equivalent(*libc, *our_libc)) << *libc << " vs " << *our_libc;
  auto by_path = resolver.resolve("/bin/sh");
  ASSERT_TRUE(by_path);
  EXPECT_EQ(*by_path, root + "/bin/sh") << "a path is the process's first";
}

}  // namespace
}  // namespace dprobe::symbols
