// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The runtime directory: never one another user owns, can write, or can
// swap from above; otherwise dprobe's own /tmp/dprobe-<uid>.
#include "cli/process/private_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "support/files.h"

namespace dprobe::cli {
namespace {

constexpr uid_t kNobody = 65534;

class PrivateDir : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    const char* xdg = std::getenv("XDG_RUNTIME_DIR");
    had_xdg_ = xdg != nullptr;
    if (had_xdg_) xdg_ = xdg;
  }
  void TearDown() override {
    if (had_xdg_) {
      ::setenv("XDG_RUNTIME_DIR", xdg_.c_str(), 1);
    } else {
      ::unsetenv("XDG_RUNTIME_DIR");
    }
  }
  std::string make(const std::string& name, mode_t mode) {
    const std::string path = root_ + "/" + name;
    EXPECT_EQ(::mkdir(path.c_str(), mode), 0);
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }
  bool trusted(const std::string& path) {
    auto fd = open_trusted_directory(path, ::geteuid());
    if (fd) ::close(*fd);
    return fd.has_value();
  }
  support::TempDir temp_;
  const std::string root_ = temp_.path();
  bool had_xdg_ = false;
  std::string xdg_;
};

TEST_F(PrivateDir, OwnPrivateDirectoryIsTrusted) { EXPECT_TRUE(trusted(make("own", 0700))); }

TEST_F(PrivateDir, DirectoryOthersCanWriteIsNot) { EXPECT_FALSE(trusted(make("open", 0777))); }

TEST_F(PrivateDir, SymlinkIsNot) {
  const std::string target = make("target", 0700);
  const std::string link = root_ + "/link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_FALSE(trusted(link));
}

TEST_F(PrivateDir, DirectoryBelowOneOthersCanRenameInIsNot) {
  const std::string open = make("open", 0777);  // no sticky bit
  ASSERT_EQ(::mkdir((open + "/mine").c_str(), 0700), 0);
  EXPECT_FALSE(trusted(open + "/mine"));
  ASSERT_EQ(::chmod(open.c_str(), 01777), 0);  // sticky, as /tmp
  EXPECT_TRUE(trusted(open + "/mine"));
}

TEST_F(PrivateDir, RelativeOrDotDotPathIsNot) {
  EXPECT_FALSE(trusted("tmp"));
  EXPECT_FALSE(trusted(root_ + "/../" + root_.substr(5)));
}

TEST_F(PrivateDir, AnotherUsersDirectoryIsNot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  const std::string users = make("user", 0700);
  ASSERT_EQ(::chown(users.c_str(), kNobody, kNobody), 0);
  EXPECT_FALSE(trusted(users));
  // ... nor is one of ours below it: its owner could swap it.
  ASSERT_EQ(::chmod(users.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((users + "/mine").c_str(), 0700), 0);
  EXPECT_FALSE(trusted(users + "/mine"));
}

TEST_F(PrivateDir, AnotherUsersXdgRuntimeDirIsNotUsed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  const std::string users = make("user", 0700);
  ASSERT_EQ(::chown(users.c_str(), kNobody, kNobody), 0);
  ::setenv("XDG_RUNTIME_DIR", users.c_str(), 1);
  auto dir = private_runtime_dir(::geteuid());
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(*dir, "/tmp/dprobe-" + std::to_string(::geteuid()));
  struct stat st {};
  ASSERT_EQ(::lstat(dir->c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(st.st_mode & 0077, 0u);
}

TEST_F(PrivateDir, OwnXdgRuntimeDirIsUsed) {
  const std::string own = make("own", 0700);
  ::setenv("XDG_RUNTIME_DIR", own.c_str(), 1);
  auto dir = private_runtime_dir(::geteuid());
  ASSERT_TRUE(dir) << dir.error().message;
  EXPECT_EQ(*dir, own);
}

TEST_F(PrivateDir, FallbackPlantedByAnotherUserIsRefused) {
  // /tmp/dprobe-<uid> made by someone else first: refused, never used.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  const std::string planted = make("planted", 0700);
  ASSERT_EQ(::chown(planted.c_str(), kNobody, kNobody), 0);
  EXPECT_FALSE(trusted(planted));
}

}  // namespace
}  // namespace dprobe::cli
