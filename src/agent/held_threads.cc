// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/held_threads.h"

#include <unistd.h>

#include <atomic>

#include "arch/runtime/raw_syscall.h"
#include "protocol/channel.h"
#include "protocol/messages.h"

namespace dprobe::agent {
namespace {

std::atomic<bool> g_cli_holds_threads{false};

}  // namespace

bool ask_cli_to_hold_others(int socket) {
  const protocol::HoldThreads hold{{arch::raw_gettid()}};
  if (!protocol::send_message(socket, protocol::MessageType::kHoldThreads, encode(hold))) {
    return false;
  }
  // The threads may be stopped from here on: nothing below allocates.
  while (true) {
    std::byte held[1];
    auto answer = protocol::receive_small_message(socket, held);
    if (!answer) return false;
    if (answer->type == protocol::MessageType::kThreadsHeld) {
      return answer->size == 1 && held[0] == std::byte{1};
    }
  }
}

void set_cli_holds_threads(bool can) noexcept { g_cli_holds_threads.store(can); }

bool cli_holds_threads() noexcept { return g_cli_holds_threads.load(); }

}  // namespace dprobe::agent
