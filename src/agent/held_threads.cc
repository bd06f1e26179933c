// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/held_threads.h"

#include <unistd.h>

#include <atomic>
#include <mutex>

#include "arch/runtime/raw_syscall.h"
#include "protocol/channel.h"
#include "protocol/messages.h"

namespace dprobe::agent {
namespace {

std::atomic<bool> g_cli_holds_threads{false};

}  // namespace

bool ask_cli_to_hold_others(int socket, std::mutex& send_mutex) {
  {
    const protocol::HoldThreads hold{{arch::raw_gettid()}};
    std::lock_guard lock(send_mutex);
    if (!protocol::send_message(socket, protocol::MessageType::kHoldThreads, encode(hold))) {
      return false;
    }
  }
  while (true) {
    auto answer = protocol::receive_message(socket);
    if (!answer) return false;
    if (answer->fd >= 0) ::close(answer->fd);
    if (answer->type == protocol::MessageType::kThreadsHeld) {
      return answer->payload.size() == 1 && answer->payload[0] == std::byte{1};
    }
  }
}

void set_cli_holds_threads(bool can) noexcept { g_cli_holds_threads.store(can); }

bool cli_holds_threads() noexcept { return g_cli_holds_threads.load(); }

}  // namespace dprobe::agent
