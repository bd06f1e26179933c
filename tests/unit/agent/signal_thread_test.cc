// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Each thread's view of the held signals (agent/signal_thread.h): what the
// program blocks of them, kept apart from the real mask; signals kept
// pending while blocked and taken, merged or sent again; the frames of the
// program's handlers, their masks and the places they return to, and the
// frames found gone (returned, or left by siglongjmp). Every test runs on
// a thread of its own: the view is the thread's.
#include "agent/signal_thread.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include <atomic>
#include <thread>

#include "agent/interrupted_places.h"
#include "agent/kernel_signal.h"
#include "arch/runtime/context.h"

namespace dprobe::agent {
namespace {

constexpr SignalMask kTrap = signal_bit(SIGTRAP);
constexpr SignalMask kSegv = signal_bit(SIGSEGV);
constexpr SignalMask kBus = signal_bit(SIGBUS);
constexpr SignalMask kUsr1 = signal_bit(SIGUSR1);

template <typename Test>
void on_a_thread_of_its_own(Test test) {
  std::thread(test).join();
}

siginfo_t info_of(int sig, int code, uint64_t address) {
  siginfo_t info{};
  info.si_signo = sig;
  info.si_code = code;
  info.si_addr = reinterpret_cast<void*>(address);
  return info;
}

// What the kernel hands a handler: the mask at delivery and the pc.
ucontext_t delivered(SignalMask mask, uint64_t pc = 0x401000) {
  ucontext_t context{};
  set_kernel_mask(context.uc_sigmask, mask);
  arch::set_context_pc(context, pc);
  return context;
}

TEST(SignalThread, TheViewKeepsTheHeldSignalsOnly) {
  on_a_thread_of_its_own([] {
    EXPECT_EQ(program_blocked(UINT64_MAX, 0), 0u) << "a new thread blocks none";
    set_view(kSegv | kUsr1);
    EXPECT_EQ(program_blocked(UINT64_MAX, 0), kSegv);
    set_program_blocked(kTrap | kBus | kUsr1, kUsr1);
    EXPECT_EQ(program_blocked(UINT64_MAX, kUsr1), kTrap | kBus);
  });
}

TEST(SignalThread, TheViewIsTheThreads) {
  set_view(kSegv);
  on_a_thread_of_its_own([] { EXPECT_EQ(program_blocked(UINT64_MAX, 0), 0u); });
  set_view(0);
}

TEST(SignalThread, ASignalKeptIsTakenWithItsInfo) {
  on_a_thread_of_its_own([] {
    ucontext_t context = delivered(0);
    keep_pending(SIGSEGV, info_of(SIGSEGV, SEGV_MAPERR, 0xdead), context);
    EXPECT_EQ(kept_pending(), kSegv);
    EXPECT_EQ(pending_arrivals(), 1u);
    siginfo_t taken{};
    EXPECT_EQ(take_pending(kSegv | kBus, &taken), SIGSEGV);
    EXPECT_EQ(taken.si_code, SEGV_MAPERR);
    EXPECT_EQ(taken.si_addr, reinterpret_cast<void*>(0xdead));
    EXPECT_EQ(kept_pending(), 0u);
    EXPECT_EQ(take_pending(kSegv, &taken), 0);
  });
}

// One pending instance of a standard signal: the second merges with the
// first, whose info stays; both count as arrivals (a waiter must not
// sleep through either).
TEST(SignalThread, ASecondInstanceMergesWithTheFirst) {
  on_a_thread_of_its_own([] {
    ucontext_t context = delivered(0);
    keep_pending(SIGBUS, info_of(SIGBUS, BUS_ADRERR, 0x1000), context);
    keep_pending(SIGBUS, info_of(SIGBUS, BUS_ADRALN, 0x2000), context);
    EXPECT_EQ(pending_arrivals(), 2u);
    siginfo_t taken{};
    EXPECT_EQ(take_pending(kBus, &taken), SIGBUS);
    EXPECT_EQ(taken.si_code, BUS_ADRERR);
    EXPECT_EQ(take_pending(kBus, &taken), 0) << "one instance only";
  });
}

TEST(SignalThread, TheLowestWantedHeldSignalIsTakenFirst) {
  on_a_thread_of_its_own([] {
    ucontext_t context = delivered(0);
    keep_pending(SIGSEGV, info_of(SIGSEGV, SEGV_MAPERR, 0), context);
    keep_pending(SIGBUS, info_of(SIGBUS, BUS_ADRERR, 0), context);
    keep_pending(SIGTRAP, info_of(SIGTRAP, TRAP_BRKPT, 0), context);
    EXPECT_EQ(take_pending(kSegv | kBus, nullptr), SIGBUS);
    EXPECT_EQ(take_pending(~SignalMask{0}, nullptr), SIGTRAP);
    EXPECT_EQ(take_pending(kUsr1, nullptr), 0) << "not a held signal";
    EXPECT_EQ(take_pending(~SignalMask{0}, nullptr), SIGSEGV);
    EXPECT_EQ(take_pending(~SignalMask{0}, nullptr), 0);
  });
}

TEST(SignalThread, AForkedChildHasNoneKept) {
  on_a_thread_of_its_own([] {
    ucontext_t context = delivered(0);
    keep_pending(SIGSEGV, info_of(SIGSEGV, SEGV_MAPERR, 0), context);
    forget_pending();
    EXPECT_EQ(kept_pending(), 0u);
  });
}

// A waiter compares the arrivals it saw: a signal kept after it looked
// interrupts the wait before it begins.
TEST(SignalThread, AWaitAfterAnArrivalDoesNotBegin) {
  on_a_thread_of_its_own([] {
    const uint32_t seen = pending_arrivals();
    EXPECT_EQ(wait_syscall(SYS_getpid, 0, 0, 0, 0, seen), ::getpid()) << "nothing came";
    ucontext_t context = delivered(0);
    keep_pending(SIGSEGV, info_of(SIGSEGV, SEGV_MAPERR, 0), context);
    EXPECT_EQ(wait_syscall(SYS_getpid, 0, 0, 0, 0, seen), kWaitInterrupted);
  });
}

std::atomic<int> g_bus_code{0};
std::atomic<uint64_t> g_bus_address{0};

void on_bus(int, siginfo_t* info, void*) {
  g_bus_code.store(info->si_code);
  g_bus_address.store(reinterpret_cast<uint64_t>(info->si_addr));
}

// Unblocked, a kept signal is sent again to its thread, as it came.
TEST(SignalThread, UnblockedAKeptSignalIsSentAgainWithItsInfo) {
  struct sigaction action {};
  struct sigaction saved {};
  action.sa_sigaction = on_bus;
  action.sa_flags = SA_SIGINFO;
  ASSERT_EQ(::sigaction(SIGBUS, &action, &saved), 0);
  g_bus_code.store(0);
  g_bus_address.store(0);
  on_a_thread_of_its_own([] {
    set_view(kBus);
    ucontext_t context = delivered(0);
    keep_pending(SIGBUS, info_of(SIGBUS, BUS_ADRALN, 0xbeef), context);
    release_unblocked();
    EXPECT_EQ(g_bus_code.load(), 0) << "sent while the program blocks it";
    EXPECT_EQ(kept_pending(), kBus);
    set_view(0);
    release_unblocked();
    EXPECT_EQ(kept_pending(), 0u);
  });
  ::sigaction(SIGBUS, &saved, nullptr);
  EXPECT_EQ(g_bus_code.load(), BUS_ADRALN);
  EXPECT_EQ(g_bus_address.load(), 0xbeefu);
}

// ---- The program's handlers ------------------------------------------------------

constexpr uint64_t kFrameSp = 0x7000'0000;
constexpr uint64_t kPc = 0x401000;

// The handler's mask is the view inside it; the program's handler sees
// the view in its context; where it returns to is noted.
TEST(SignalThread, EnteringAHandler) {
  on_a_thread_of_its_own([] {
    set_view(kSegv);
    ucontext_t context = delivered(kUsr1, kPc);
    enter_handler(kTrap | kBus | kUsr1, kUsr1, context, kFrameSp);
    EXPECT_EQ(to_kernel_mask(context.uc_sigmask), kUsr1 | kSegv);
    EXPECT_EQ(program_blocked(kFrameSp - 64, kUsr1), kTrap | kBus);
    EXPECT_TRUE(interrupted_inside(kPc - 1, kPc + 1));
    ucontext_t back = delivered(kUsr1 | kSegv);
    leave_handler(back, kFrameSp);
  });
}

// What the handler's context says when it returns is the view after it;
// the real mask keeps no held signal.
TEST(SignalThread, LeavingAHandler) {
  on_a_thread_of_its_own([] {
    ucontext_t context = delivered(0, kPc);
    enter_handler(kTrap, 0, context, kFrameSp);
    ucontext_t back = delivered(kBus | kUsr1);
    leave_handler(back, kFrameSp);
    EXPECT_EQ(program_blocked(UINT64_MAX, 0), kBus);
    EXPECT_EQ(to_kernel_mask(back.uc_sigmask), kUsr1);
    EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + 1)) << "its place kept";
  });
}

// Left by siglongjmp: code runs above the handler's frame, or the real
// mask is not the handler's any more. The view before it comes back.
TEST(SignalThread, AHandlerLeftByLongjmpIsFoundGone) {
  on_a_thread_of_its_own([] {
    set_view(kSegv);
    ucontext_t context = delivered(0, kPc);
    enter_handler(kTrap, kUsr1, context, kFrameSp);
    EXPECT_EQ(program_blocked(kFrameSp, kUsr1), kTrap) << "still inside";
    EXPECT_EQ(program_blocked(kFrameSp + 8, kUsr1), kSegv) << "above its frame";
    EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + 1));
    enter_handler(kTrap, kUsr1, context, kFrameSp);
    EXPECT_EQ(program_blocked(kFrameSp - 8, 0), kSegv) << "the mask siglongjmp restored";
    EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + 1));
  });
}

// The real mask's held bits are never the handler's concern.
TEST(SignalThread, TheRealMasksHeldBitsDoNotMakeAFrameStale) {
  on_a_thread_of_its_own([] {
    ucontext_t context = delivered(0, kPc);
    enter_handler(kTrap, kUsr1, context, kFrameSp);
    EXPECT_EQ(program_blocked(kFrameSp - 8, kUsr1 | kSegv), kTrap);
    ucontext_t back = delivered(0);
    leave_handler(back, kFrameSp);
  });
}

// On the alternate stack the frame's sp says nothing of the thread's
// stack: code on the thread's stack is outside the handler.
TEST(SignalThread, AHandlerOnTheAlternateStackIsGoneOnceCodeRunsOffIt) {
  on_a_thread_of_its_own([] {
    ucontext_t context = delivered(0, kPc);
    context.uc_stack.ss_sp = reinterpret_cast<void*>(0x6000'0000);
    context.uc_stack.ss_size = 0x10000;
    const uint64_t on_alt = 0x6000'8000;
    enter_handler(kTrap, 0, context, on_alt);
    EXPECT_EQ(program_blocked(on_alt - 8, 0), kTrap);
    EXPECT_EQ(program_blocked(0x5fff'ff00, 0), 0u) << "below the alternate stack";
    EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + 1));
  });
}

// Nested handlers each keep the view of before; leaving the inner one
// keeps the outer.
TEST(SignalThread, NestedHandlers) {
  on_a_thread_of_its_own([] {
    ucontext_t outer = delivered(0, kPc);
    enter_handler(kTrap, 0, outer, kFrameSp);
    ucontext_t inner = delivered(0, kPc + 0x100);
    enter_handler(kTrap | kBus, 0, inner, kFrameSp - 0x1000);
    EXPECT_EQ(program_blocked(kFrameSp - 0x2000, 0), kTrap | kBus);
    ucontext_t back = delivered(kTrap);
    leave_handler(back, kFrameSp - 0x1000);
    EXPECT_EQ(program_blocked(kFrameSp - 0x800, 0), kTrap);
    EXPECT_FALSE(interrupted_inside(kPc + 0xff, kPc + 0x101));
    EXPECT_TRUE(interrupted_inside(kPc - 1, kPc + 1));
    leave_handler(back, kFrameSp);
    EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + 1));
  });
}

// Deeper than any real program nests: the view still follows, no place
// is noted that no frame would forget.
TEST(SignalThread, PastTheDeepestFrameNoPlaceIsNoted) {
  on_a_thread_of_its_own([] {
    constexpr int kMostFrames = 16;
    for (int depth = 0; depth < kMostFrames; ++depth) {
      ucontext_t context = delivered(0, kPc + static_cast<uint64_t>(depth));
      enter_handler(kTrap, 0, context, kFrameSp - static_cast<uint64_t>(depth) * 0x100);
    }
    ucontext_t deepest = delivered(0, 0x900000);
    enter_handler(kBus, 0, deepest, kFrameSp - 0x10000);
    EXPECT_EQ(program_blocked(kFrameSp - 0x20000, 0), kBus);
    EXPECT_FALSE(interrupted_inside(0x8fffff, 0x900001));
    ucontext_t back = delivered(0);
    leave_handler(back, kFrameSp);
    EXPECT_FALSE(interrupted_inside(kPc - 1, kPc + kMostFrames));
  });
}

}  // namespace
}  // namespace dprobe::agent
