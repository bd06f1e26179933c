// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "protocol/channel.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace dprobe::protocol {
namespace {

constexpr size_t kHeaderBytes = 5;

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

Result<void> send_all(int socket, const std::byte* data, size_t size) {
  while (size > 0) {
    const ssize_t sent = ::send(socket, data, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return fail(errno_text("send"));
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return {};
}

// The header goes in one sendmsg so that a descriptor travels with it.
Result<void> send_header(int socket, const std::byte (&header)[kHeaderBytes], int fd) {
  auto sent = send_with_descriptor(socket, header, fd);
  if (!sent) return unexpected(sent.error());
  if (*sent < kHeaderBytes) return send_all(socket, header + *sent, kHeaderBytes - *sent);
  return {};
}

Result<void> receive_all(int socket, std::byte* data, size_t size) {
  while (size > 0) {
    const ssize_t got = ::recv(socket, data, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fail(errno_text("recv"));
    if (got == 0) return fail("the other side closed the channel");
    data += got;
    size -= static_cast<size_t>(got);
  }
  return {};
}

Result<int> receive_header(int socket, std::byte (&header)[kHeaderBytes]) {
  auto got = receive_with_descriptor(socket, header);
  if (!got) return unexpected(got.error());
  if (got->size < kHeaderBytes) {
    auto rest = receive_all(socket, header + got->size, kHeaderBytes - got->size);
    if (!rest) {
      if (got->fd >= 0) ::close(got->fd);
      return unexpected(rest.error());
    }
  }
  return got->fd;
}

}  // namespace

Result<size_t> send_with_descriptor(int socket, std::span<const std::byte> bytes, int fd) {
  iovec iov{const_cast<std::byte*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  }
  ssize_t sent;
  do {
    sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return fail(errno_text("sendmsg"));
  return static_cast<size_t>(sent);
}

Result<Received> receive_with_descriptor(int socket, std::span<std::byte> bytes, int flags) {
  iovec iov{bytes.data(), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t got;
  do {
    got = ::recvmsg(socket, &msg, flags | MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return fail(errno_text("recvmsg"));
  if (got == 0) return fail("the other side closed the channel");
  int fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
    }
  }
  return Received{static_cast<size_t>(got), fd};
}

Result<void> send_message(int socket, MessageType type, std::span<const std::byte> payload,
                          int fd) {
  if (payload.size() > kMaxPayload) return fail("message too large");
  const auto length = static_cast<uint32_t>(payload.size());
  std::byte header[kHeaderBytes];
  std::memcpy(header, &length, 4);
  header[4] = static_cast<std::byte>(type);
  if (auto sent = send_header(socket, header, fd); !sent) return sent;
  return send_all(socket, payload.data(), payload.size());
}

Result<Message> receive_message(int socket) {
  std::byte header[kHeaderBytes];
  auto fd = receive_header(socket, header);
  if (!fd) return unexpected(fd.error());
  Message message;
  message.fd = *fd;
  uint32_t length = 0;
  std::memcpy(&length, header, 4);
  message.type = static_cast<MessageType>(header[4]);
  if (length > kMaxPayload) {
    if (message.fd >= 0) ::close(message.fd);
    return fail("message too large");
  }
  message.payload.resize(length);
  if (auto body = receive_all(socket, message.payload.data(), length); !body) {
    if (message.fd >= 0) ::close(message.fd);
    return unexpected(body.error());
  }
  return message;
}

Result<SmallMessage> receive_small_message(int socket, std::span<std::byte> payload) {
  std::byte header[kHeaderBytes];
  auto fd = receive_header(socket, header);
  if (!fd) return unexpected(fd.error());
  if (*fd >= 0) ::close(*fd);
  SmallMessage message;
  std::memcpy(&message.size, header, 4);
  message.type = static_cast<MessageType>(header[4]);
  const bool keep = message.size <= payload.size();
  std::byte dropped[256];
  size_t left = message.size;
  while (left > 0) {
    std::byte* into = keep ? payload.data() + (message.size - left) : dropped;
    const size_t chunk = keep ? left : std::min(left, sizeof(dropped));
    if (auto body = receive_all(socket, into, chunk); !body) return unexpected(body.error());
    left -= chunk;
  }
  return message;
}

Result<PeerCredentials> peer_credentials(int socket) {
  ucred cred{};
  socklen_t size = sizeof(cred);
  if (::getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &cred, &size) != 0) {
    return fail(errno_text("SO_PEERCRED"));
  }
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

}  // namespace dprobe::protocol
