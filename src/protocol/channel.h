// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Framed messages over a connected Unix stream socket: a 5-byte header
// (payload length, message type), the payload, and optionally one file
// descriptor passed alongside (SCM_RIGHTS).
//
//   send_message(sock, MessageType::kGo, {});
//   auto message = receive_message(sock);   // blocks for a whole frame
//   if (message && message->type == MessageType::kHello) ...
#ifndef DPROBE_PROTOCOL_CHANNEL_H_
#define DPROBE_PROTOCOL_CHANNEL_H_

#include <sys/types.h>

#include <cstddef>
#include <span>
#include <vector>

#include "base/result.h"
#include "protocol/messages.h"

namespace dprobe::protocol {

// Frames larger than this are refused: a wildcard over a big library is a
// few megabytes of definitions, nowhere near it.
inline constexpr uint32_t kMaxPayload = 256u << 20;

struct Message {
  MessageType type = MessageType::kHello;
  std::vector<std::byte> payload;
  int fd = -1;  // received descriptor, owned by the receiver; -1 if none
};

Result<void> send_message(int socket, MessageType type, std::span<const std::byte> payload,
                          int fd = -1);
// One sendmsg of `bytes`, with `fd` attached when it is not -1: how many of
// the bytes went (send_message sends the rest of a frame after these).
Result<size_t> send_with_descriptor(int socket, std::span<const std::byte> bytes, int fd);
// Its twin: one recvmsg into `bytes` (with recvmsg's `flags`, such as
// MSG_DONTWAIT), a descriptor sent along taken close-on-exec: how many
// bytes came, and the descriptor, -1 if none. The other side closing is an
// error.
struct Received {
  size_t size;
  int fd;
};
Result<Received> receive_with_descriptor(int socket, std::span<std::byte> bytes, int flags = 0);
Result<Message> receive_message(int socket);

// A message received into the caller's `payload` buffer, allocating
// nothing (for a thread that must not call the allocator: the agent's
// while the program's threads are stopped). A longer payload is read and
// dropped; `size` says how long it was. A descriptor sent along is closed.
struct SmallMessage {
  MessageType type = MessageType::kHello;
  uint32_t size = 0;
};
Result<SmallMessage> receive_small_message(int socket, std::span<std::byte> payload);

struct PeerCredentials {
  pid_t pid;
  uid_t uid;
  gid_t gid;
};
Result<PeerCredentials> peer_credentials(int socket);

}  // namespace dprobe::protocol

#endif  // DPROBE_PROTOCOL_CHANNEL_H_
