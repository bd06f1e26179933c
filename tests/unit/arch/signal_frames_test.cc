// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The signal frames read off a thread's stack (arch/runtime/signal_frames.h),
// from inside real handlers: what the kernel passed each handler as its
// interrupted pc is what the scan finds, innermost first, through nested
// handlers and across an alternate signal stack.
#include "arch/runtime/signal_frames.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cstdint>
#include <vector>

#include "arch/runtime/context.h"

namespace dprobe::arch {
namespace {

struct Seen {
  uint64_t usr1_pc = 0;  // what the kernel passed each handler
  uint64_t usr2_pc = 0;
  uint64_t usr2_sp = 0;  // where its handler ran
  std::vector<InterruptedPlace> found;
  size_t count = 0;
};
Seen g_seen;
bool g_nest = false;

uint64_t here() { return reinterpret_cast<uint64_t>(__builtin_frame_address(0)); }

StackBounds alternate_of(const ucontext_t& context) {
  if ((context.uc_stack.ss_flags & SS_DISABLE) != 0) return {};
  const auto begin = reinterpret_cast<uint64_t>(context.uc_stack.ss_sp);
  return {begin, begin + context.uc_stack.ss_size};
}

void scan_from_here(const ucontext_t& context) {
  g_seen.found.assign(8, {});
  uint64_t buffer[16];  // small, as in a handler
  const FrameScan scan = interrupted_places_above(here(), alternate_of(context),
                                                  current_restorers(), g_seen.found, buffer);
  g_seen.count = scan.unreadable ? 0 : scan.found;
}

void on_usr2(int, siginfo_t*, void* context) {
  const auto& uc = *static_cast<ucontext_t*>(context);
  g_seen.usr2_pc = context_pc(uc);
  g_seen.usr2_sp = here();
  scan_from_here(uc);
}

void on_usr1(int, siginfo_t*, void* context) {
  const auto& uc = *static_cast<ucontext_t*>(context);
  g_seen.usr1_pc = context_pc(uc);
  if (g_nest) {
    raise(SIGUSR2);
  } else {
    scan_from_here(uc);
  }
}

class SignalFrames : public ::testing::Test {
 protected:
  void SetUp() override {
    g_seen = {};
    g_nest = false;
    install(SIGUSR1, on_usr1, &saved_usr1_);
    install(SIGUSR2, on_usr2, &saved_usr2_);
  }
  void TearDown() override {
    sigaction(SIGUSR1, &saved_usr1_, nullptr);
    sigaction(SIGUSR2, &saved_usr2_, nullptr);
  }
  static void install(int sig, void (*handler)(int, siginfo_t*, void*), struct sigaction* saved,
                      int flags = SA_SIGINFO | SA_ONSTACK) {
    struct sigaction action = {};
    action.sa_sigaction = handler;
    action.sa_flags = flags;
    sigemptyset(&action.sa_mask);
    ASSERT_EQ(sigaction(sig, &action, saved), 0);
  }
  struct sigaction saved_usr1_ = {};
  struct sigaction saved_usr2_ = {};
};

#if defined(__x86_64__)

TEST_F(SignalFrames, TheScanFindsTheInterruptedPcTheKernelGaveTheHandler) {
  raise(SIGUSR1);
  ASSERT_NE(g_seen.usr1_pc, 0u);
  ASSERT_GE(g_seen.count, 1u);
  EXPECT_EQ(g_seen.found[0].pc, g_seen.usr1_pc);
  EXPECT_EQ(g_seen.found[0].signal, SIGUSR1);
}

TEST_F(SignalFrames, NestedHandlersAreFoundInnermostFirst) {
  g_nest = true;
  raise(SIGUSR1);
  ASSERT_GE(g_seen.count, 2u);
  EXPECT_EQ(g_seen.found[0].pc, g_seen.usr2_pc);
  EXPECT_EQ(g_seen.found[0].signal, SIGUSR2);
  EXPECT_EQ(g_seen.found[1].pc, g_seen.usr1_pc);
  EXPECT_EQ(g_seen.found[1].signal, SIGUSR1);
}

TEST_F(SignalFrames, AHandlerOnTheAlternateStackLeadsBackToTheStackItInterrupted) {
  constexpr size_t kSize = 64 * 1024;
  void* memory = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  stack_t stack = {};
  stack.ss_sp = memory;
  stack.ss_size = kSize;
  stack_t old = {};
  ASSERT_EQ(sigaltstack(&stack, &old), 0);
  // SIGUSR1's frame on this stack, SIGUSR2's on the alternate one.
  install(SIGUSR1, on_usr1, nullptr, SA_SIGINFO);
  g_nest = true;
  raise(SIGUSR1);
  sigaltstack(&old, nullptr);
  munmap(memory, kSize);
  ASSERT_GE(g_seen.count, 2u);
  EXPECT_EQ(g_seen.found[0].pc, g_seen.usr2_pc);
  EXPECT_EQ(g_seen.found[0].signal, SIGUSR2);
  EXPECT_EQ(g_seen.found[1].pc, g_seen.usr1_pc);
  EXPECT_EQ(g_seen.found[1].signal, SIGUSR1);
  EXPECT_LT(g_seen.usr2_sp - reinterpret_cast<uint64_t>(memory), kSize)
      << "SIGUSR2's handler ran on the alternate stack";
}

TEST_F(SignalFrames, NoHandlerNoPlace) {
  InterruptedPlace places[4];
  uint64_t buffer[512];
  const FrameScan scan = interrupted_places_above(here(), {}, current_restorers(), places, buffer);
  EXPECT_FALSE(scan.unreadable);
  EXPECT_EQ(scan.found, 0u);
}

// A stack that cannot be read says so: no frame found is not "none there".
TEST_F(SignalFrames, AnUnreadableStackIsNotAnEmptyOne) {
  void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  InterruptedPlace places[4];
  uint64_t buffer[16];
  const FrameScan scan = interrupted_places_above(reinterpret_cast<uint64_t>(page) + 256, {},
                                                  current_restorers(), places, buffer);
  munmap(page, 4096);
  EXPECT_TRUE(scan.unreadable);
}

TEST_F(SignalFrames, EveryHandlersRestorerIsKnown) {
  const Restorers restorers = current_restorers();
  struct sigaction action = {};
  ASSERT_EQ(sigaction(SIGUSR1, nullptr, &action), 0);
  constexpr int kSaRestorer = 0x04000000;  // the kernel's flag; the C library sets it
  ASSERT_NE(action.sa_flags & kSaRestorer, 0);
  EXPECT_TRUE(restorers.holds(reinterpret_cast<uint64_t>(action.sa_restorer)));
}

#else

// One instruction replaced in one store: nothing to look for.
TEST_F(SignalFrames, NothingIsReadWhereAJumpIsOneInstruction) {
  raise(SIGUSR1);
  EXPECT_EQ(g_seen.count, 0u);
}

#endif

}  // namespace
}  // namespace dprobe::arch
