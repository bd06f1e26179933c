// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The table of the program's actions for the signals the agent holds
// (agent/signal_table.h): the conversions from and to struct sigaction and
// the kernel's, what the agent installs to mirror an action, SA_RESETHAND's
// reset that yields to a newer action, and readers that never see half an
// action while another thread writes one. The tests install the agent's
// action for SIGBUS and SIGSYS in this process (never delivered) and put
// the process's own back.
#include "agent/signal_table.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "unit/agent/link_seams.h"

namespace dprobe::agent {
namespace {

void agent_handler(int, siginfo_t*, void*) {}
void program_handler(int) {}
void other_program_handler(int) {}
void* const kRestorer = reinterpret_cast<void*>(0x1000);  // never returned through

void* as_pointer(void (*function)(int)) { return reinterpret_cast<void*>(function); }

RecordedAction handler_action(void (*handler)(int), uint64_t flags, SignalMask mask) {
  return {{Disposition::kHandler, flags, mask}, as_pointer(handler)};
}

KernelSigaction installed(int sig) {
  KernelSigaction now{};
  EXPECT_FALSE(arch::raw_failed(kernel_sigaction(sig, nullptr, &now)));
  return now;
}

void expect_same(const RecordedAction& a, const RecordedAction& b) {
  EXPECT_EQ(a.action.disposition, b.action.disposition);
  EXPECT_EQ(a.action.flags, b.action.flags);
  EXPECT_EQ(a.action.mask, b.action.mask);
  EXPECT_EQ(a.handler, b.handler);
}

TEST(HeldIndex, TheFourHeldSignalsAndNoOther) {
  EXPECT_EQ(held_index(SIGTRAP), 0);
  EXPECT_EQ(held_index(SIGSEGV), 1);
  EXPECT_EQ(held_index(SIGBUS), 2);
  EXPECT_EQ(held_index(SIGSYS), 3);
  for (const int sig : {0, SIGUSR1, SIGKILL, SIGCHLD, SIGRTMIN, 64}) {
    EXPECT_EQ(held_index(sig), -1) << sig;
  }
}

TEST(FromKernel, DefaultIgnoreOrAHandler) {
  KernelSigaction kernel{};
  kernel.handler = reinterpret_cast<void*>(SIG_DFL);
  EXPECT_EQ(from_kernel(kernel).action.disposition, Disposition::kDefault);
  EXPECT_EQ(from_kernel(kernel).handler, nullptr);
  kernel.handler = reinterpret_cast<void*>(SIG_IGN);
  EXPECT_EQ(from_kernel(kernel).action.disposition, Disposition::kIgnore);
  EXPECT_EQ(from_kernel(kernel).handler, nullptr);
  kernel.handler = as_pointer(program_handler);
  EXPECT_EQ(from_kernel(kernel).action.disposition, Disposition::kHandler);
  EXPECT_EQ(from_kernel(kernel).handler, as_pointer(program_handler));
}

// The kernel never blocks SIGKILL or SIGSTOP, whatever sa_mask says.
TEST(FromKernel, KeepsTheFlagsAndTheMaskButTheUnblockable) {
  KernelSigaction kernel{};
  kernel.handler = as_pointer(program_handler);
  kernel.flags = SA_ONSTACK | SA_RESETHAND;
  kernel.mask = signal_bit(SIGUSR1) | signal_bit(SIGKILL) | signal_bit(SIGSTOP);
  const RecordedAction recorded = from_kernel(kernel);
  EXPECT_EQ(recorded.action.flags, static_cast<uint64_t>(SA_ONSTACK | SA_RESETHAND));
  EXPECT_EQ(recorded.action.mask, signal_bit(SIGUSR1));
}

TEST(FromSigaction, AHandlerWithSiginfoOrWithout) {
  struct sigaction action {};
  action.sa_handler = program_handler;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGUSR2);
  sigaddset(&action.sa_mask, SIGKILL);
  action.sa_flags = SA_RESTART;
  RecordedAction recorded = from_sigaction(action);
  EXPECT_EQ(recorded.action.disposition, Disposition::kHandler);
  EXPECT_EQ(recorded.handler, as_pointer(program_handler));
  EXPECT_EQ(recorded.action.flags, static_cast<uint64_t>(SA_RESTART));
  EXPECT_EQ(recorded.action.mask, signal_bit(SIGUSR2));
  action.sa_sigaction = agent_handler;
  action.sa_flags = SA_SIGINFO;
  recorded = from_sigaction(action);
  EXPECT_EQ(recorded.handler, reinterpret_cast<void*>(agent_handler));
  EXPECT_EQ(recorded.action.flags, static_cast<uint64_t>(SA_SIGINFO));
}

TEST(ToSigaction, GivesBackWhatWasRecorded) {
  const RecordedAction actions[] = {
      {{Disposition::kDefault, SA_RESTART, signal_bit(SIGUSR1)}, nullptr},
      {{Disposition::kIgnore, 0, 0}, nullptr},
      handler_action(program_handler, SA_ONSTACK | SA_NODEFER, signal_bit(SIGINT)),
  };
  for (const RecordedAction& recorded : actions) {
    struct sigaction action;
    std::memset(&action, 0xa5, sizeof(action));  // nothing of before is left
    to_sigaction(recorded, action);
    expect_same(from_sigaction(action), recorded);
    EXPECT_EQ(sigismember(&action.sa_mask, SIGUSR2), 0);
  }
}

// ---- The table and what the kernel has --------------------------------------

class SignalTable : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::sigaction(SIGBUS, nullptr, &saved_bus_), 0);
    ASSERT_EQ(::sigaction(SIGSYS, nullptr, &saved_sys_), 0);
    set_agent_handler(agent_handler, kRestorer);
  }
  void TearDown() override {
    const RecordedAction none{};
    write_action(SIGBUS, &none, nullptr);
    write_action(SIGSYS, &none, nullptr);
    ::sigaction(SIGBUS, &saved_bus_, nullptr);
    ::sigaction(SIGSYS, &saved_sys_, nullptr);
  }

  struct sigaction saved_bus_ {};
  struct sigaction saved_sys_ {};
};

TEST_F(SignalTable, WhatIsWrittenIsReadAndTheOldIsGivenBack) {
  const RecordedAction first = handler_action(program_handler, SA_RESTART, signal_bit(SIGUSR1));
  const RecordedAction second = handler_action(other_program_handler, 0, 0);
  ASSERT_TRUE(write_action(SIGBUS, &first, nullptr));
  expect_same(read_action(SIGBUS), first);
  RecordedAction old;
  ASSERT_TRUE(write_action(SIGBUS, &second, &old));
  expect_same(old, first);
  expect_same(read_action(SIGBUS), second);
}

TEST_F(SignalTable, AskingForTheOldOnlyChangesNothing) {
  const RecordedAction first = handler_action(program_handler, SA_RESTART, 0);
  ASSERT_TRUE(write_action(SIGBUS, &first, nullptr));
  const KernelSigaction before = installed(SIGBUS);
  RecordedAction old;
  ASSERT_TRUE(write_action(SIGBUS, nullptr, &old));
  expect_same(old, first);
  expect_same(read_action(SIGBUS), first);
  EXPECT_EQ(installed(SIGBUS).flags, before.flags);
}

// The kernel gets the agent's handler with the program's SA_ONSTACK and
// SA_RESTART (the stack and the restarts are the program's), SA_NODEFER
// (a breakpoint in the handler traps again), and the program's mask
// without the held signals.
TEST_F(SignalTable, TheAgentsHandlerMirrorsTheProgramsAction) {
  const SignalMask program_mask = signal_bit(SIGUSR1) | signal_bit(SIGTRAP) | signal_bit(SIGSEGV);
  const RecordedAction action =
      handler_action(program_handler, SA_ONSTACK | SA_RESTART | SA_RESETHAND, program_mask);
  ASSERT_TRUE(write_action(SIGBUS, &action, nullptr));
  const KernelSigaction now = installed(SIGBUS);
  EXPECT_EQ(now.handler, reinterpret_cast<void*>(agent_handler));
  EXPECT_EQ(now.restorer, kRestorer);
  EXPECT_EQ(now.flags, SA_SIGINFO | SA_NODEFER | kSaRestorer | SA_ONSTACK | SA_RESTART);
  EXPECT_EQ(now.mask, signal_bit(SIGUSR1)) << "a held signal in the handler's mask";
  EXPECT_TRUE(agent_handler_installed(SIGBUS));
}

TEST_F(SignalTable, MirrorsWithoutTheProgramsFlagsForADefaultOrIgnoredAction) {
  for (const Disposition disposition : {Disposition::kDefault, Disposition::kIgnore}) {
    const RecordedAction action{{disposition, SA_ONSTACK, signal_bit(SIGUSR1)}, nullptr};
    ASSERT_TRUE(write_action(SIGBUS, &action, nullptr));
    const KernelSigaction now = installed(SIGBUS);
    EXPECT_EQ(now.handler, reinterpret_cast<void*>(agent_handler));
    EXPECT_EQ(now.flags, SA_SIGINFO | SA_NODEFER | kSaRestorer | SA_RESTART);
    EXPECT_EQ(now.mask, 0u);
    expect_same(read_action(SIGBUS), action);
  }
}

// SIGSYS returns through the dispatch's restorer (its rt_sigreturn must
// not be a call the dispatch sends back as SIGSYS).
TEST_F(SignalTable, SigsysReturnsThroughTheDispatchsRestorer) {
  const RecordedAction action = handler_action(program_handler, 0, 0);
  ASSERT_TRUE(write_action(SIGSYS, &action, nullptr));
  EXPECT_EQ(installed(SIGSYS).restorer, test::dispatch_restorer_stand_in());
}

// arm64's C library sets no restorer: the kernel returns through the vDSO.
TEST_F(SignalTable, NoRestorerFlagWithoutARestorer) {
  set_agent_handler(agent_handler, nullptr);
  const RecordedAction action = handler_action(program_handler, 0, 0);
  ASSERT_TRUE(write_action(SIGBUS, &action, nullptr));
  EXPECT_EQ(installed(SIGBUS).flags & kSaRestorer, 0u);
}

TEST_F(SignalTable, AgentHandlerInstalledSaysWhoseHandlerTheKernelHas) {
  struct sigaction program {};
  program.sa_handler = program_handler;
  ASSERT_EQ(::sigaction(SIGBUS, &program, nullptr), 0);
  EXPECT_FALSE(agent_handler_installed(SIGBUS));
  const RecordedAction action = handler_action(program_handler, 0, 0);
  ASSERT_TRUE(write_action(SIGBUS, &action, nullptr));
  EXPECT_TRUE(agent_handler_installed(SIGBUS));
}

// SA_RESETHAND: the action the delivery read becomes SIG_DFL, its flags
// and mask kept, as the kernel does.
TEST_F(SignalTable, AResetMakesTheActionReadDefault) {
  const RecordedAction action =
      handler_action(program_handler, SA_RESETHAND | SA_ONSTACK, signal_bit(SIGUSR1));
  ASSERT_TRUE(write_action(SIGBUS, &action, nullptr));
  uint32_t version = 0;
  read_action(SIGBUS, &version);
  reset_to_default(SIGBUS, version);
  const RecordedAction reset = read_action(SIGBUS);
  EXPECT_EQ(reset.action.disposition, Disposition::kDefault);
  EXPECT_EQ(reset.handler, nullptr);
  EXPECT_EQ(reset.action.flags, static_cast<uint64_t>(SA_RESETHAND | SA_ONSTACK));
  EXPECT_EQ(reset.action.mask, signal_bit(SIGUSR1));
  EXPECT_EQ(installed(SIGBUS).flags & SA_RESTART, static_cast<unsigned long>(SA_RESTART))
      << "mirrored as a default action";
}

// The program set another action between the delivery and the reset: the
// newer one stays.
TEST_F(SignalTable, AResetYieldsToANewerAction) {
  const RecordedAction first = handler_action(program_handler, SA_RESETHAND, 0);
  const RecordedAction newer = handler_action(other_program_handler, 0, 0);
  ASSERT_TRUE(write_action(SIGBUS, &first, nullptr));
  uint32_t version = 0;
  read_action(SIGBUS, &version);
  ASSERT_TRUE(write_action(SIGBUS, &newer, nullptr));
  reset_to_default(SIGBUS, version);
  expect_same(read_action(SIGBUS), newer);
}

TEST_F(SignalTable, EveryWriteIsANewVersion) {
  uint32_t before = 0;
  read_action(SIGBUS, &before);
  const RecordedAction action = handler_action(program_handler, 0, 0);
  ASSERT_TRUE(write_action(SIGBUS, &action, nullptr));
  uint32_t after = 0;
  read_action(SIGBUS, &after);
  EXPECT_NE(after, before);
  EXPECT_EQ(after % 2, 0u) << "a version read is never one being written";
}

// One thread writes two actions in turn while others read: a reader sees
// one or the other, never the fields of both.
TEST_F(SignalTable, ReadersNeverSeeHalfAnAction) {
  const RecordedAction a = handler_action(program_handler, SA_ONSTACK, signal_bit(SIGUSR1));
  const RecordedAction b = handler_action(other_program_handler, SA_RESTART, signal_bit(SIGUSR2));
  ASSERT_TRUE(write_action(SIGBUS, &a, nullptr));
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        const RecordedAction seen = read_action(SIGBUS);
        const bool is_a = seen.handler == a.handler && seen.action.flags == a.action.flags &&
                          seen.action.mask == a.action.mask;
        const bool is_b = seen.handler == b.handler && seen.action.flags == b.action.flags &&
                          seen.action.mask == b.action.mask;
        if (!is_a && !is_b) torn.fetch_add(1);
        reads.fetch_add(1);
      }
    });
  }
  int refused = 0;
  for (int write = 0; write < 20000; ++write) {
    if (!write_action(SIGBUS, write % 2 == 0 ? &b : &a, nullptr)) ++refused;
  }
  done.store(true);
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(refused, 0);
  EXPECT_EQ(torn.load(), 0) << "of " << reads.load() << " reads";
}

}  // namespace
}  // namespace dprobe::agent
