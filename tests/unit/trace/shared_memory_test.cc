// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/shared_memory.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace dprobe::trace {
namespace {

using ::testing::HasSubstr;

bool fd_is_open(int fd) { return fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

TEST(SharedMemory, CreatesAZeroFilledWritableMapping) {
  auto shm = SharedMemory::create("dprobe-test", 3 * 4096);
  ASSERT_TRUE(shm) << shm.error().message;
  EXPECT_GE(shm->fd(), 0);
  EXPECT_EQ(shm->size(), 3u * 4096);
  ASSERT_NE(shm->data(), nullptr);
  const auto* bytes = static_cast<const unsigned char*>(shm->data());
  for (size_t i = 0; i < shm->size(); ++i) ASSERT_EQ(bytes[i], 0) << i;
  std::memset(shm->data(), 0x5a, shm->size());
  EXPECT_EQ(bytes[shm->size() - 1], 0x5a);
}

TEST(SharedMemory, DescriptorIsCloseOnExec) {
  auto shm = SharedMemory::create("dprobe-test", 4096);
  ASSERT_TRUE(shm);
  EXPECT_TRUE(fcntl(shm->fd(), F_GETFD) & FD_CLOEXEC);
  auto peer = SharedMemory::map(shm->fd());
  ASSERT_TRUE(peer);
  EXPECT_TRUE(fcntl(peer->fd(), F_GETFD) & FD_CLOEXEC);
}

// The traced program holds the descriptor too: were it to shrink the file,
// the CLI's reads past the new end would die of SIGBUS.
TEST(SharedMemory, CannotBeShrunkByTheOtherSide) {
  auto shm = SharedMemory::create("dprobe-test", 8192);
  ASSERT_TRUE(shm);
  EXPECT_NE(ftruncate(shm->fd(), 0), 0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(fcntl(shm->fd(), F_ADD_SEALS, F_SEAL_WRITE), 0);  // the seals are sealed
}

TEST(SharedMemory, MapRefusesMemoryThatCouldShrink) {
  const int fd = memfd_create("dprobe-test-unsealed", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 4096), 0);
  auto peer = SharedMemory::map(fd);
  close(fd);
  ASSERT_FALSE(peer);
  EXPECT_THAT(peer.error().message, HasSubstr("not sealed"));
}

TEST(SharedMemory, RejectsZeroBytes) {
  auto shm = SharedMemory::create("dprobe-test", 0);
  ASSERT_FALSE(shm);
  EXPECT_THAT(shm.error().message, HasSubstr("0 bytes"));
}

TEST(SharedMemory, MapSeesTheSamePagesThroughItsOwnDescriptor) {
  auto shm = SharedMemory::create("dprobe-test", 8192);
  ASSERT_TRUE(shm);
  auto peer = SharedMemory::map(shm->fd());
  ASSERT_TRUE(peer) << peer.error().message;
  EXPECT_EQ(peer->size(), 8192u);
  EXPECT_NE(peer->fd(), shm->fd());
  EXPECT_NE(peer->data(), shm->data());
  static_cast<char*>(shm->data())[8191] = 'a';
  EXPECT_EQ(static_cast<const char*>(peer->data())[8191], 'a');
  static_cast<char*>(peer->data())[0] = 'b';
  EXPECT_EQ(static_cast<const char*>(shm->data())[0], 'b');
}

TEST(SharedMemory, MapLeavesTheCallersDescriptorOpen) {
  auto shm = SharedMemory::create("dprobe-test", 4096);
  ASSERT_TRUE(shm);
  {
    auto peer = SharedMemory::map(shm->fd());
    ASSERT_TRUE(peer);
  }
  EXPECT_TRUE(fd_is_open(shm->fd()));
  EXPECT_TRUE(SharedMemory::map(shm->fd()));
}

TEST(SharedMemory, MapReportsTheSystemError) {
  auto bad = SharedMemory::map(-1);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr(std::strerror(EBADF)));
}

TEST(SharedMemory, MapRejectsAnEmptyFile) {
  const int fd = memfd_create("empty", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto shm = SharedMemory::map(fd);
  close(fd);
  ASSERT_FALSE(shm);
  EXPECT_THAT(shm.error().message, HasSubstr("empty"));
}

TEST(SharedMemory, DestructorClosesTheDescriptor) {
  int fd = -1;
  {
    auto shm = SharedMemory::create("dprobe-test", 4096);
    ASSERT_TRUE(shm);
    fd = shm->fd();
    EXPECT_TRUE(fd_is_open(fd));
  }
  EXPECT_FALSE(fd_is_open(fd));
}

TEST(SharedMemory, MovingTransfersOwnership) {
  auto shm = SharedMemory::create("dprobe-test", 4096);
  ASSERT_TRUE(shm);
  const int fd = shm->fd();
  void* data = shm->data();
  SharedMemory moved = std::move(*shm);
  EXPECT_EQ(shm->fd(), -1);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(shm->data(), nullptr);
  EXPECT_EQ(shm->size(), 0u);
  EXPECT_EQ(moved.fd(), fd);
  EXPECT_EQ(moved.data(), data);

  auto other = SharedMemory::create("dprobe-test", 8192);
  ASSERT_TRUE(other);
  const int other_fd = other->fd();
  moved = std::move(*other);  // releases the first block
  EXPECT_FALSE(fd_is_open(fd));
  EXPECT_EQ(moved.fd(), other_fd);
  EXPECT_EQ(moved.size(), 8192u);
}

TEST(SharedMemory, AChildProcessWritesWhatTheParentReads) {
  auto shm = SharedMemory::create("dprobe-test", 4096);
  ASSERT_TRUE(shm);
  auto peer = SharedMemory::map(shm->fd());
  ASSERT_TRUE(peer);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::memcpy(shm->data(), "from the child", 15);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_STREQ(static_cast<const char*>(peer->data()), "from the child");
}

}  // namespace
}  // namespace dprobe::trace
