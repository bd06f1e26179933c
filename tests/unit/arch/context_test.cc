// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The host ISA's signal-context operations on real signals: a breakpoint
// instruction's SIGTRAP is recognised and a sent one is not, registers
// round-trip through the saved frame and a changed pc is where the thread
// goes on; and the guarded system call, which must not start once its
// counter moved.
#include "arch/runtime/context.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>

#include "arch/probe_insn.h"
#include "arch/runtime/guarded_syscall.h"

namespace dprobe::arch {
namespace {

// The engine's breakpoint, then where the handler sends the thread: the
// breakpoint's length on, as a probe's resume would.
#if defined(__x86_64__)
#define DPROBE_TEST_BREAKPOINT() __asm__ volatile("int3" ::: "memory")
constexpr uint64_t kTrapPcToNext = 0;  // int3 reports the pc after it
#elif defined(__aarch64__)
#define DPROBE_TEST_BREAKPOINT() __asm__ volatile(".inst 0xd42c8e00" ::: "memory")
constexpr uint64_t kTrapPcToNext = 4;  // brk reports its own pc
#endif

volatile sig_atomic_t g_traps = 0;
volatile sig_atomic_t g_breakpoints = 0;
volatile uint64_t g_sp_seen = 0;

void on_trap(int, siginfo_t* info, void* raw) {
  auto& context = *static_cast<ucontext_t*>(raw);
  g_traps = g_traps + 1;
  if (!is_breakpoint_trap(*info)) return;
  g_breakpoints = g_breakpoints + 1;
  SavedRegs regs;
  load_regs(context, regs);
  g_sp_seen = regs.slot[kSpSlot];
  regs.slot[kIpSlot] += kTrapPcToNext;
  store_regs(regs, context);
}

class ContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    struct sigaction action = {};
    action.sa_sigaction = on_trap;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ASSERT_EQ(sigaction(SIGTRAP, &action, &old_), 0);
    g_traps = 0;
    g_breakpoints = 0;
  }
  void TearDown() override { sigaction(SIGTRAP, &old_, nullptr); }

 private:
  struct sigaction old_ = {};
};

TEST_F(ContextTest, ABreakpointInstructionIsRecognisedAndResumedPast) {
  int local = 0;
  DPROBE_TEST_BREAKPOINT();
  EXPECT_EQ(g_traps, 1);
  EXPECT_EQ(g_breakpoints, 1);
  // The interrupted stack pointer is this frame's, not the handler's.
  const auto here = reinterpret_cast<uint64_t>(&local);
  EXPECT_LT(g_sp_seen, here + 4096);
  EXPECT_GT(g_sp_seen + 4096, here);
}

TEST_F(ContextTest, ASentSigtrapIsNotABreakpoint) {
  ASSERT_EQ(raise(SIGTRAP), 0);
  EXPECT_EQ(g_traps, 1);
  EXPECT_EQ(g_breakpoints, 0);
}

TEST(GuardedSyscall, RunsTheCallWhileTheCounterIsUnchanged) {
  const uint32_t counter = 7;
  EXPECT_EQ(guarded_syscall(SYS_getppid, 0, 0, 0, 0, &counter, 7), static_cast<long>(getppid()));
}

TEST(GuardedSyscall, DoesNotStartTheCallOnceTheCounterMoved) {
  const uint32_t counter = 8;
  // A call that would block for a second if it started.
  const struct timespec second = {1, 0};
  EXPECT_EQ(guarded_syscall(SYS_nanosleep, reinterpret_cast<long>(&second), 0, 0, 0, &counter, 7),
            kGuardInterrupted);
}

}  // namespace
}  // namespace dprobe::arch
