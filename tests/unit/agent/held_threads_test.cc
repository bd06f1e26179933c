// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's request that the CLI hold the program's threads
// (agent/held_threads.h), against a CLI played by the test on the other
// end of a socket pair: what the request says, which answers mean held,
// and that a message that comes meanwhile is dropped.
#include "agent/held_threads.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "arch/runtime/raw_syscall.h"
#include "protocol/channel.h"
#include "protocol/messages.h"

namespace dprobe::agent {
namespace {

using protocol::MessageType;

class HeldThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    agent_ = fds[0];
    cli_ = fds[1];
  }
  void TearDown() override {
    ::close(agent_);
    if (cli_ >= 0) ::close(cli_);
  }

  // Asks, with the CLI's side played by `answer` on another thread once
  // it has the request. Whether the agent was told they are held.
  bool ask(const std::function<void(int cli)>& answer) {
    std::thread cli([&] {
      if (take_request()) {
        answer(cli_);
      } else {
        ::close(cli_);  // the agent waits for no answer then
        cli_ = -1;
      }
    });
    const bool held = ask_cli_to_hold_others(agent_);
    cli.join();
    return held;
  }

  // The agent's request, its running threads into running_.
  bool take_request() {
    auto request = protocol::receive_message(cli_);
    if (!request || request->type != MessageType::kHoldThreads) {
      ADD_FAILURE() << "no request to hold threads";
      return false;
    }
    auto hold = protocol::decode_hold_threads(request->payload);
    if (!hold) {
      ADD_FAILURE() << hold.error().message;
      return false;
    }
    running_ = hold->running;
    return true;
  }

  static void send(int socket, MessageType type, std::vector<std::byte> payload) {
    EXPECT_TRUE(protocol::send_message(socket, type, payload));
  }

  int agent_ = -1;
  int cli_ = -1;
  std::vector<uint32_t> running_;
};

// The caller arms: it is the one thread the CLI must leave running.
TEST_F(HeldThreads, TheRequestNamesTheCallingThreadOnly) {
  EXPECT_TRUE(ask([](int cli) { send(cli, MessageType::kThreadsHeld, {std::byte{1}}); }));
  EXPECT_EQ(running_, std::vector<uint32_t>{arch::raw_gettid()});
}

TEST_F(HeldThreads, AnAnswerOfZeroIsNotHeld) {
  EXPECT_FALSE(ask([](int cli) { send(cli, MessageType::kThreadsHeld, {std::byte{0}}); }));
}

TEST_F(HeldThreads, AnAnswerOfAnotherLengthIsNotHeld) {
  EXPECT_FALSE(ask([](int cli) { send(cli, MessageType::kThreadsHeld, {}); }));
  EXPECT_FALSE(ask([](int cli) {
    send(cli, MessageType::kThreadsHeld, {std::byte{1}, std::byte{1}});
  }));
}

// A late answer to a loader's question, long or short, comes first.
TEST_F(HeldThreads, AMessageThatComesMeanwhileIsDropped) {
  EXPECT_TRUE(ask([](int cli) {
    send(cli, MessageType::kObjectsChanged, std::vector<std::byte>(1000, std::byte{7}));
    send(cli, MessageType::kGo, {});
    send(cli, MessageType::kThreadsHeld, {std::byte{1}});
  }));
}

TEST_F(HeldThreads, NotHeldWhenTheCliGoesAwayWithoutAnAnswer) {
  EXPECT_FALSE(ask([this](int cli) {
    ::close(cli);
    cli_ = -1;
  }));
}

TEST_F(HeldThreads, NotHeldWhenTheRequestCannotBeSent) {
  ::close(cli_);
  cli_ = -1;
  EXPECT_FALSE(ask_cli_to_hold_others(agent_));
}

TEST(CliHoldsThreads, AsTheSessionSaid) {
  set_cli_holds_threads(true);
  EXPECT_TRUE(cli_holds_threads());
  set_cli_holds_threads(false);
  EXPECT_FALSE(cli_holds_threads());
}

}  // namespace
}  // namespace dprobe::agent
