// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Each write holds whole lines of at most PIPE_BUF bytes: a SOCK_SEQPACKET
// socket keeps every write() a message of its own, so the test sees the
// writes' boundaries.
#include "cli/output/line_writer.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

namespace dprobe::cli {
namespace {

// What write_whole_lines(text) sent, one string per write().
std::vector<std::string> writes_of(const std::string& text) {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds), 0);
  std::vector<std::string> messages;
  std::thread reader([&] {
    std::string buffer(1 << 20, '\0');
    for (ssize_t n; (n = ::recv(fds[1], buffer.data(), buffer.size(), 0)) > 0;) {
      messages.emplace_back(buffer.data(), static_cast<size_t>(n));
    }
  });
  EXPECT_TRUE(write_whole_lines(fds[0], text));
  ::close(fds[0]);
  reader.join();
  ::close(fds[1]);
  return messages;
}

std::string lines(size_t count, size_t width) {
  std::string text;
  for (size_t i = 0; i < count; ++i)
    text += std::string(width - 1, static_cast<char>('a' + i % 26)) + "\n";
  return text;
}

TEST(LineWriter, EveryWriteIsWholeLinesWithinPipeBuf) {
  const std::string text = lines(1000, 97);  // 97 KB; 97 does not divide PIPE_BUF
  const std::vector<std::string> writes = writes_of(text);
  ASSERT_GT(writes.size(), 1u);
  std::string joined;
  for (const std::string& each : writes) {
    EXPECT_LE(each.size(), size_t{PIPE_BUF});
    EXPECT_EQ(each.back(), '\n');
    EXPECT_EQ(each.size() % 97, 0u) << "whole lines only";
    joined += each;
  }
  EXPECT_EQ(joined, text);
}

TEST(LineWriter, ALineLongerThanPipeBufIsOneWriteOfItsOwn) {
  const std::string text = "short\n" + std::string(PIPE_BUF * 2, 'x') + "\nend\n";
  const std::vector<std::string> writes = writes_of(text);
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_EQ(writes[0], "short\n");
  EXPECT_EQ(writes[1].size(), size_t{PIPE_BUF} * 2 + 1);
  EXPECT_EQ(writes[2], "end\n");
}

TEST(LineWriter, SmallTextIsOneWrite) {
  const std::vector<std::string> writes = writes_of("a\nb\n");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0], "a\nb\n");
}

TEST(LineWriter, AClosedReaderIsReported) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds), 0);
  ::close(fds[1]);
  ::signal(SIGPIPE, SIG_IGN);
  EXPECT_FALSE(write_whole_lines(fds[0], "lost\n"));
  ::close(fds[0]);
}

}  // namespace
}  // namespace dprobe::cli
