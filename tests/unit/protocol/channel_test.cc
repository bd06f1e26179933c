// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Framed messages over real Unix stream sockets: frames of every size keep
// their boundaries, a descriptor passed alongside opens the same file on
// the other side, and every way a peer can go away or lie about a length
// is a clean error that leaks no descriptor.
#include "protocol/channel.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "protocol/messages.h"
#include "support/patience.h"

namespace dprobe::protocol {
namespace {

using ::testing::HasSubstr;

// Both ends of a connected stream socket pair, closed at the end.
class SocketPair {
 public:
  SocketPair() {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
    a_ = fds[0];
    b_ = fds[1];
  }
  ~SocketPair() {
    close_a();
    close_b();
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;

  int a() const { return a_; }
  int b() const { return b_; }
  void close_a() {
    if (a_ >= 0) ::close(a_);
    a_ = -1;
  }
  void close_b() {
    if (b_ >= 0) ::close(b_);
    b_ = -1;
  }

 private:
  int a_ = -1;
  int b_ = -1;
};

std::vector<std::byte> pattern(size_t size) {
  std::vector<std::byte> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 131 + i / 7) & 0xff);
  return bytes;
}

std::vector<std::byte> text(const std::string& s) {
  std::vector<std::byte> bytes(s.size());
  std::memcpy(bytes.data(), s.data(), s.size());
  return bytes;
}

int make_memfd(const char* name, const std::string& content) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) std::abort();
  if (::write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
    std::abort();
  }
  return fd;
}

// How many of our descriptors are open on a memfd of this name.
int open_memfds_named(const std::string& name) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const auto target = std::filesystem::read_symlink(entry.path(), error);
    // "/memfd:NAME (deleted)"
    if (!error && target.string().find("/memfd:" + name + " ") == 0) ++count;
  }
  return count;
}

// Bytes as they are, with one descriptor attached: for frames that lie.
void send_raw(int socket, const std::vector<uint8_t>& bytes, int fd = -1) {
  auto sent = send_with_descriptor(socket, std::as_bytes(std::span(bytes)), fd);
  ASSERT_TRUE(sent) << sent.error().message;
  ASSERT_EQ(*sent, bytes.size());
}

// A receive that would block forever fails after a patience() instead.
void set_receive_timeout(int socket) {
  const auto limit = support::patience();
  timeval tv{static_cast<time_t>(limit.count() / 1000),
             static_cast<suseconds_t>(limit.count() % 1000 * 1000)};
  ASSERT_EQ(setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
}

TEST(Channel, EmptyMessage) {
  SocketPair pair;
  ASSERT_TRUE(send_message(pair.a(), MessageType::kGo, {}));
  auto message = receive_message(pair.b());
  ASSERT_TRUE(message) << message.error().message;
  EXPECT_EQ(message->type, MessageType::kGo);
  EXPECT_TRUE(message->payload.empty());
  EXPECT_EQ(message->fd, -1);
}

TEST(Channel, FrameIsLengthThenTypeThenPayload) {
  SocketPair pair;
  ASSERT_TRUE(send_message(pair.a(), MessageType::kArmReport, text("abc")));
  uint8_t wire[16] = {};
  ASSERT_EQ(recv(pair.b(), wire, sizeof(wire), 0), 8);
  const uint8_t expected[] = {3,   0,   0,  0, static_cast<uint8_t>(MessageType::kArmReport),
                              'a', 'b', 'c'};
  EXPECT_EQ(std::memcmp(wire, expected, sizeof(expected)), 0);
}

TEST(Channel, SmallPayloadCarriesAMessage) {
  SocketPair pair;
  Hello hello;
  hello.pid = 1234;
  hello.objects.push_back({"/bin/true", 0x555555554000, 1, 2, true});
  ASSERT_TRUE(send_message(pair.a(), MessageType::kHello, encode(hello)));
  auto message = receive_message(pair.b());
  ASSERT_TRUE(message) << message.error().message;
  EXPECT_EQ(message->type, MessageType::kHello);
  EXPECT_EQ(message->fd, -1);
  auto back = decode_hello(message->payload);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->pid, 1234u);
  ASSERT_EQ(back->objects.size(), 1u);
  EXPECT_EQ(back->objects[0].path, "/bin/true");
}

// The agent's read while the program's threads are stopped: into its own
// buffer, a payload too long for it read through and dropped, the next
// message intact after it.
TEST(Channel, SmallMessageFitsTheBufferOrIsDroppedWhole) {
  SocketPair pair;
  const std::vector<std::byte> long_payload(3000, std::byte{7});
  const std::byte held{1};
  ASSERT_TRUE(send_message(pair.a(), MessageType::kProbes, long_payload));
  ASSERT_TRUE(send_message(pair.a(), MessageType::kThreadsHeld, std::span(&held, 1)));
  std::byte buffer[1] = {std::byte{0}};
  auto dropped = receive_small_message(pair.b(), buffer);
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(dropped->type, MessageType::kProbes);
  EXPECT_EQ(dropped->size, 3000u);
  EXPECT_EQ(buffer[0], std::byte{0}) << "a payload too long is not written";
  auto answer = receive_small_message(pair.b(), buffer);
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(answer->type, MessageType::kThreadsHeld);
  EXPECT_EQ(answer->size, 1u);
  EXPECT_EQ(buffer[0], std::byte{1});
  pair.close_a();
  EXPECT_FALSE(receive_small_message(pair.b(), buffer));
}

TEST(Channel, EveryTypeAndSizeKeepsItsFrame) {
  SocketPair pair;
  const MessageType types[] = {MessageType::kHello, MessageType::kProbes, MessageType::kArmReport,
                               MessageType::kGo, MessageType::kAbort};
  const size_t sizes[] = {0, 1, 4, 5, 4095, 4096, 4097, 70000};
  std::thread sender([&] {
    for (size_t size : sizes) {
      for (MessageType type : types) {
        if (!send_message(pair.a(), type, pattern(size))) return;
      }
    }
  });
  bool ok = true;
  for (size_t size : sizes) {
    for (MessageType type : types) {
      if (!ok) break;
      auto message = receive_message(pair.b());
      if (!message) {
        ADD_FAILURE() << message.error().message;
        ok = false;
        break;
      }
      EXPECT_EQ(message->type, type) << size;
      EXPECT_EQ(message->payload, pattern(size)) << size;
    }
  }
  if (!ok) pair.close_b();  // unblocks the sender
  sender.join();
}

TEST(Channel, MultiMegabytePayloadsBothWays) {
  SocketPair pair;
  const std::vector<std::byte> big = pattern(24u << 20);
  const std::vector<std::byte> other = pattern((3u << 20) + 17);
  std::thread sender([&] {
    ASSERT_TRUE(send_message(pair.a(), MessageType::kProbes, big));
    auto answer = receive_message(pair.a());
    ASSERT_TRUE(answer) << answer.error().message;
    EXPECT_EQ(answer->type, MessageType::kArmReport);
    EXPECT_TRUE(answer->payload == other);
  });
  auto message = receive_message(pair.b());
  if (message) {
    EXPECT_EQ(message->type, MessageType::kProbes);
    EXPECT_EQ(message->payload.size(), big.size());
    EXPECT_TRUE(message->payload == big);
    EXPECT_TRUE(send_message(pair.b(), MessageType::kArmReport, other));
  } else {
    ADD_FAILURE() << message.error().message;
    pair.close_b();  // unblocks the sender
  }
  sender.join();
}

TEST(Channel, PassedMemfdOpensTheSameFileOnTheOtherSide) {
  SocketPair pair;
  const std::string content = "trace memory of the agent";
  const int memfd = make_memfd("dprobe-channel-test", content);
  ASSERT_TRUE(send_message(pair.a(), MessageType::kArmReport, text("report"), memfd));

  auto message = receive_message(pair.b());
  ASSERT_TRUE(message) << message.error().message;
  EXPECT_EQ(message->type, MessageType::kArmReport);
  EXPECT_EQ(message->payload, text("report"));
  ASSERT_GE(message->fd, 0);
  EXPECT_NE(message->fd, memfd);
  EXPECT_TRUE(fcntl(message->fd, F_GETFD) & FD_CLOEXEC);

  struct stat sent = {};
  struct stat received = {};
  ASSERT_EQ(fstat(memfd, &sent), 0);
  ASSERT_EQ(fstat(message->fd, &received), 0);
  EXPECT_EQ(sent.st_ino, received.st_ino);
  EXPECT_EQ(sent.st_dev, received.st_dev);

  std::string read_back(content.size(), '\0');
  ASSERT_EQ(pread(message->fd, read_back.data(), read_back.size(), 0),
            static_cast<ssize_t>(content.size()));
  EXPECT_EQ(read_back, content);
  // Shared, not copied: a write on one side shows on the other.
  ASSERT_EQ(pwrite(message->fd, "T", 1, 0), 1);
  char first = 0;
  ASSERT_EQ(pread(memfd, &first, 1, 0), 1);
  EXPECT_EQ(first, 'T');

  ::close(message->fd);
  ::close(memfd);
}

TEST(Channel, DescriptorWithAnEmptyPayload) {
  SocketPair pair;
  const int memfd = make_memfd("dprobe-channel-empty", "x");
  ASSERT_TRUE(send_message(pair.a(), MessageType::kGo, {}, memfd));
  ASSERT_TRUE(send_message(pair.a(), MessageType::kAbort, {}));
  auto first = receive_message(pair.b());
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_GE(first->fd, 0);
  auto second = receive_message(pair.b());
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->type, MessageType::kAbort);
  EXPECT_EQ(second->fd, -1);  // the descriptor went with the first frame only
  ::close(first->fd);
  ::close(memfd);
}

TEST(Channel, OtherSideClosedIsACleanError) {
  SocketPair pair;
  pair.close_a();
  auto message = receive_message(pair.b());
  ASSERT_FALSE(message);
  EXPECT_THAT(message.error().message, HasSubstr("closed"));
}

TEST(Channel, OtherSideClosedMidHeader) {
  SocketPair pair;
  send_raw(pair.a(), {5, 0, 0});
  pair.close_a();
  auto message = receive_message(pair.b());
  ASSERT_FALSE(message);
  EXPECT_THAT(message.error().message, HasSubstr("closed"));
}

TEST(Channel, OtherSideClosedMidPayloadLeaksNoDescriptor) {
  SocketPair pair;
  const std::string name = "dprobe-channel-leak-payload";
  const int memfd = make_memfd(name.c_str(), "x");
  // 100 bytes announced, 10 sent, with a descriptor on the header.
  send_raw(pair.a(), {100, 0, 0, 0, static_cast<uint8_t>(MessageType::kArmReport)}, memfd);
  send_raw(pair.a(), std::vector<uint8_t>(10, 0x42));
  ::close(memfd);
  pair.close_a();
  auto message = receive_message(pair.b());
  ASSERT_FALSE(message);
  EXPECT_THAT(message.error().message, HasSubstr("closed"));
  EXPECT_EQ(open_memfds_named(name), 0);
}

TEST(Channel, OversizedFrameIsRefusedWithoutWaitingForIt) {
  SocketPair pair;
  set_receive_timeout(pair.b());
  const std::string name = "dprobe-channel-leak-oversized";
  const int memfd = make_memfd(name.c_str(), "x");
  // A length of 4 GiB - 1 and nothing after it; the sender stays connected.
  send_raw(pair.a(), {0xff, 0xff, 0xff, 0xff, static_cast<uint8_t>(MessageType::kProbes)}, memfd);
  ::close(memfd);
  auto message = receive_message(pair.b());
  ASSERT_FALSE(message);
  EXPECT_THAT(message.error().message, HasSubstr("too large"));
  EXPECT_EQ(open_memfds_named(name), 0);
}

TEST(Channel, LargestAllowedLengthIsNotRefusedAsTooLarge) {
  // kMaxPayload itself is allowed: the receiver waits for the payload (and
  // here the sender closes instead of sending it).
  SocketPair pair;
  const uint32_t length = kMaxPayload;
  std::vector<uint8_t> header(5);
  std::memcpy(header.data(), &length, 4);
  header[4] = static_cast<uint8_t>(MessageType::kProbes);
  send_raw(pair.a(), header);
  pair.close_a();
  auto message = receive_message(pair.b());
  ASSERT_FALSE(message);
  EXPECT_THAT(message.error().message, HasSubstr("closed"));
}

TEST(Channel, SendRefusesAnOversizedPayloadAndSendsNothing) {
  SocketPair pair;
  const size_t size = size_t{kMaxPayload} + 1;
  // Reserved, never touched: the size alone must refuse it.
  void* mapping =
      mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  auto sent = send_message(pair.a(), MessageType::kProbes,
                           std::span(static_cast<const std::byte*>(mapping), size));
  munmap(mapping, size);
  ASSERT_FALSE(sent);
  EXPECT_THAT(sent.error().message, HasSubstr("too large"));
  char byte = 0;
  EXPECT_EQ(recv(pair.b(), &byte, 1, MSG_DONTWAIT), -1);
  EXPECT_EQ(errno, EAGAIN);
}

TEST(Channel, SendingToAClosedPeerFailsWithoutSigpipe) {
  SocketPair pair;
  pair.close_b();
  auto sent = send_message(pair.a(), MessageType::kGo, pattern(100));
  ASSERT_FALSE(sent);  // and the test is still alive: no SIGPIPE
  EXPECT_FALSE(sent.error().message.empty());
}

TEST(Channel, ReceivingFromANonSocketFails) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ::close(fds[1]);
  auto message = receive_message(fds[0]);
  EXPECT_FALSE(message);
  ::close(fds[0]);
}

TEST(Channel, PeerCredentialsOfASocketPairAreOurs) {
  SocketPair pair;
  auto creds = peer_credentials(pair.a());
  ASSERT_TRUE(creds) << creds.error().message;
  EXPECT_EQ(creds->pid, getpid());
  EXPECT_EQ(creds->uid, getuid());
  EXPECT_EQ(creds->gid, getgid());
  auto other = peer_credentials(pair.b());
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_EQ(other->pid, getpid());
}

TEST(Channel, PeerCredentialsNameTheConnectingProcess) {
  // As the agent connects to the CLI: the accepted socket names the child.
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string name = "dprobe-channel-test-" + std::to_string(getpid());
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // abstract
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(listen(listener, 1), 0);

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0 || connect(s, reinterpret_cast<sockaddr*>(&address), length) != 0) _exit(1);
    char byte = 0;
    (void)!read(s, &byte, 1);  // wait until the parent has looked
    _exit(0);
  }
  const int accepted = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(accepted, 0);
  auto creds = peer_credentials(accepted);
  ::close(accepted);
  ::close(listener);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(creds) << creds.error().message;
  EXPECT_EQ(creds->pid, child);
  EXPECT_EQ(creds->uid, getuid());
}

TEST(Channel, PeerCredentialsOfANonSocketFail) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  auto creds = peer_credentials(fds[0]);
  ASSERT_FALSE(creds);
  EXPECT_THAT(creds.error().message, HasSubstr("SO_PEERCRED"));
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace dprobe::protocol
