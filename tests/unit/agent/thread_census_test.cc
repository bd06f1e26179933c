// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The thread census's reading and bookkeeping (agent/thread_census.h), on
// values and on this process's own threads: the kernel's line of a
// thread's system call, which range a pc keeps from being clear, which
// calls lend the process's memory to a vfork child, the tag of a question,
// the list of the other threads, and the places the census cannot see.
// The census itself, asking threads where they run, is tests/unit/census.
#include "agent/thread_census.h"

#include <gtest/gtest.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "agent/hit/descriptor_gate.h"
#include "arch/probe_insn.h"
#include "arch/runtime/raw_syscall.h"
#include "unit/agent/gone_thread.h"

namespace dprobe::agent {
namespace {

using namespace std::chrono_literals;
using core::DisplacedRange;

// ---- /proc/self/task/TID/syscall ------------------------------------------------

TEST(ParseTaskSyscall, AThreadInASystemCall) {
  const TaskSyscall seen =
      parse_task_syscall("7 0x7ffd3a10 0x1 0xffffffff 0x0 0x0 0x0 0x7ffd39f8 0x7f3c5e91a9ef\n");
  EXPECT_EQ(seen.kind, TaskSyscall::kStopped);
  EXPECT_EQ(seen.nr, 7);
  EXPECT_EQ(seen.arg, 0x7ffd3a10u);
  EXPECT_EQ(seen.sp, 0x7ffd39f8u);
  EXPECT_EQ(seen.pc, 0x7f3c5e91a9efu);
}

TEST(ParseTaskSyscall, AThreadStoppedOutsideASystemCall) {
  const TaskSyscall seen = parse_task_syscall("-1 0x7ffe12345678 0x401136\n");
  EXPECT_EQ(seen.kind, TaskSyscall::kStopped);
  EXPECT_EQ(seen.nr, -1);
  EXPECT_EQ(seen.arg, 0u) << "no argument outside a system call";
  EXPECT_EQ(seen.sp, 0x7ffe12345678u);
  EXPECT_EQ(seen.pc, 0x401136u);
}

TEST(ParseTaskSyscall, FullWidthAddresses) {
  const TaskSyscall seen =
      parse_task_syscall("96 0x0 0x0 0x0 0x0 0x0 0x0 0xfffffffffffffff0 0xffffffffff600000\n");
  EXPECT_EQ(seen.kind, TaskSyscall::kStopped);
  EXPECT_EQ(seen.sp, 0xfffffffffffffff0u);
  EXPECT_EQ(seen.pc, 0xffffffffff600000u);
}

TEST(ParseTaskSyscall, AThreadOnACoreHasNoPlace) {
  EXPECT_EQ(parse_task_syscall("running\n").kind, TaskSyscall::kOnCore);
  EXPECT_EQ(parse_task_syscall("running").kind, TaskSyscall::kOnCore);
}

TEST(ParseTaskSyscall, NothingReadIsAThreadGone) {
  EXPECT_EQ(parse_task_syscall("").kind, TaskSyscall::kGone);
}

// Text cut short says no place: the thread is asked instead.
TEST(ParseTaskSyscall, TextWithoutAStackPointerAndAPcIsNoPlace) {
  EXPECT_EQ(parse_task_syscall("-1").kind, TaskSyscall::kOnCore);
  EXPECT_EQ(parse_task_syscall("0x401136\n").kind, TaskSyscall::kOnCore);
  EXPECT_EQ(parse_task_syscall("-1 0x401136").kind, TaskSyscall::kOnCore);
}

// ---- Which range a pc is in -----------------------------------------------------

constexpr DisplacedRange kRange{0x1000, 0x1008, 0x9000, 0x5000, 0x5020, false};
constexpr DisplacedRange kSyscallSite{0x2000, 0x200c, 0x9100, 0x6000, 0x6020, true};

size_t holding(uint64_t pc, bool waiting = false) {
  const std::array ranges{kRange, kSyscallSite};
  return range_holding(pc, ranges.data(), ranges.size(), waiting);
}

// The first byte traps (or is the jump's) and resumes in the copy: a
// thread there is outside. The end is the next instruction.
TEST(RangeHolding, TheBytesPastTheFirstUpToTheEnd) {
  EXPECT_EQ(holding(0x1000), kInNoRange);
  EXPECT_EQ(holding(0x1001), 0u);
  EXPECT_EQ(holding(0x1007), 0u);
  EXPECT_EQ(holding(0x1008), kInNoRange);
  EXPECT_EQ(holding(0x0fff), kInNoRange);
  EXPECT_EQ(holding(0x2001), 1u);
}

// A thread in the out-of-line slot goes back into the bytes: its whole
// slot counts, from its first byte.
TEST(RangeHolding, TheWholeSlot) {
  EXPECT_EQ(holding(0x5000), 0u);
  EXPECT_EQ(holding(0x501f), 0u);
  EXPECT_EQ(holding(0x5020), kInNoRange);
  EXPECT_EQ(holding(0x6000), 1u);
}

// A thread waiting in a site's system call is at the range's end, and a
// restart takes it back to the syscall instruction, inside.
TEST(RangeHolding, TheEndOfASyscallSiteForAThreadWaitingInTheCall) {
  EXPECT_EQ(holding(0x200c, /*waiting=*/true), 1u);
  EXPECT_EQ(holding(0x200c, /*waiting=*/false), kInNoRange) << "on a core: past the call";
  EXPECT_EQ(holding(0x1008, /*waiting=*/true), kInNoRange) << "no syscall ends this range";
}

TEST(RangeHolding, TheFirstOfRangesThatHoldThePc) {
  const std::array ranges{DisplacedRange{0x100, 0x110}, DisplacedRange{0x100, 0x120},
                          DisplacedRange{0x200, 0x210}};
  EXPECT_EQ(range_holding(0x105, ranges.data(), ranges.size()), 0u);
  EXPECT_EQ(range_holding(0x115, ranges.data(), ranges.size()), 1u);
  EXPECT_EQ(range_holding(0x205, ranges.data(), ranges.size()), 2u);
  EXPECT_EQ(range_holding(0x105, ranges.data(), 0), kInNoRange);
}

// A range without a slot ({0, 0}) holds no pc by its slot, not even 0.
TEST(RangeHolding, NoSlotHoldsNothing) {
  const DisplacedRange unslotted{0x100, 0x110};
  EXPECT_EQ(range_holding(0, &unslotted, 1), kInNoRange);
}

// ---- vfork ----------------------------------------------------------------------

TEST(WaitsInVfork, VforkAndCloneWithCloneVfork) {
#ifdef SYS_vfork
  EXPECT_TRUE(waits_in_vfork(SYS_vfork, 0));
#endif
  EXPECT_TRUE(waits_in_vfork(SYS_clone, CLONE_VM | CLONE_VFORK | SIGCHLD));
  EXPECT_FALSE(waits_in_vfork(SYS_clone, SIGCHLD)) << "fork";
  EXPECT_FALSE(waits_in_vfork(SYS_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND))
      << "a new thread: seen by the next census";
  EXPECT_FALSE(waits_in_vfork(SYS_read, CLONE_VFORK)) << "another call's argument";
  EXPECT_FALSE(waits_in_vfork(-1, CLONE_VFORK)) << "no call";
}

// clone3's flags are in memory: read there, and a bad address is no vfork.
TEST(WaitsInVfork, Clone3ReadsItsFlags) {
  clone_args args{};
  args.flags = CLONE_VM | CLONE_VFORK;
  EXPECT_TRUE(waits_in_vfork(SYS_clone3, reinterpret_cast<uint64_t>(&args)));
  args.flags = CLONE_VM;
  EXPECT_FALSE(waits_in_vfork(SYS_clone3, reinterpret_cast<uint64_t>(&args)));
  EXPECT_FALSE(waits_in_vfork(SYS_clone3, 0));
  EXPECT_FALSE(waits_in_vfork(SYS_clone3, 8));
}

// ---- The tag of a question ------------------------------------------------------

siginfo_t queued_by(uint32_t pid, uint64_t value, int code = SI_QUEUE) {
  siginfo_t info{};
  info.si_signo = kQuestionSignal;
  info.si_code = code;
  info.si_pid = static_cast<pid_t>(pid);
  info.si_value.sival_ptr = reinterpret_cast<void*>(value);
  return info;
}

TEST(TagOf, TheHighHalfOfTheValueOfASignalThisProcessQueued) {
  const uint32_t pid = arch::own_pid();
  EXPECT_EQ(tag_of(kQuestionSignal, queued_by(pid, 0x64707262'00000007)), 0x64707262u);
  EXPECT_EQ(tag_of(kQuestionSignal, queued_by(pid, 0x00000001'ffffffff)), 1u);
}

TEST(TagOf, NoneForAnyOtherSignal) {
  const uint32_t pid = arch::own_pid();
  const uint64_t value = 0x64707262'00000007;
  EXPECT_EQ(tag_of(SIGTRAP, queued_by(pid, value)), 0u) << "another signal";
  EXPECT_EQ(tag_of(kQuestionSignal, queued_by(pid + 1, value)), 0u) << "another process's";
  EXPECT_EQ(tag_of(kQuestionSignal, queued_by(pid, value, SEGV_MAPERR)), 0u) << "a fault";
  EXPECT_EQ(tag_of(kQuestionSignal, queued_by(pid, value, SI_TKILL)), 0u) << "tgkill";
}

std::atomic<uint32_t> g_tag_seen{0};
std::atomic<uint32_t> g_low_seen{0};

void note_tag(int sig, siginfo_t* info, void*) {
  g_tag_seen.store(tag_of(sig, *info));
  g_low_seen.store(static_cast<uint32_t>(reinterpret_cast<uint64_t>(info->si_value.sival_ptr)));
}

TEST(SendTaggedSignal, ItsTagAndLowHalfArriveOnTheThread) {
  struct sigaction action {};
  struct sigaction saved {};
  action.sa_sigaction = note_tag;
  action.sa_flags = SA_SIGINFO;
  ASSERT_EQ(::sigaction(kQuestionSignal, &action, &saved), 0);
  g_tag_seen.store(0);
  // Sent to this thread: it is delivered as the system call returns.
  const bool sent = send_tagged_signal(arch::raw_gettid(), 0x12345678, 42);
  ::sigaction(kQuestionSignal, &saved, nullptr);
  ASSERT_TRUE(sent);
  EXPECT_EQ(g_tag_seen.load(), 0x12345678u);
  EXPECT_EQ(g_low_seen.load(), 42u);
}

TEST(SendTaggedSignal, NotToAThreadThatIsGone) {
  const uint32_t gone = test::run_on_a_thread_gone_after([] {});
  ASSERT_NE(gone, 0u);
  EXPECT_FALSE(send_tagged_signal(gone, 0x12345678));
}

// ---- The other threads ----------------------------------------------------------

// Threads that wait until let go; their ids.
class Waiters {
 public:
  explicit Waiters(size_t count) {
    for (size_t i = 0; i < count; ++i) {
      threads_.emplace_back([this] {
        tids_[started_.fetch_add(1)].store(arch::raw_gettid());
        while (!go_.load()) std::this_thread::sleep_for(1ms);
      });
    }
    while (started_.load() < count) std::this_thread::yield();
    for (size_t i = 0; i < count; ++i) {
      while (tids_[i].load() == 0) std::this_thread::yield();
    }
  }
  ~Waiters() {
    go_.store(true);
    for (std::thread& thread : threads_) thread.join();
  }
  std::vector<uint32_t> tids() const {
    std::vector<uint32_t> tids;
    for (size_t i = 0; i < threads_.size(); ++i) tids.push_back(tids_[i].load());
    return tids;
  }

 private:
  std::array<std::atomic<uint32_t>, 8> tids_{};
  std::atomic<size_t> started_{0};
  std::atomic<bool> go_{false};
  std::vector<std::thread> threads_;
};

bool contains(const std::vector<uint32_t>& tids, uint32_t tid) {
  return std::find(tids.begin(), tids.end(), tid) != tids.end();
}

TEST(OtherThreads, EveryThreadButTheCaller) {
  const Waiters waiters(3);
  const auto others = other_threads();
  ASSERT_TRUE(others);
  for (const uint32_t tid : waiters.tids()) EXPECT_TRUE(contains(*others, tid)) << tid;
  EXPECT_FALSE(contains(*others, arch::raw_gettid()));
  EXPECT_FALSE(no_other_threads());
}

TEST(OtherThreads, NotAThreadThatIsGone) {
  const uint32_t gone = test::run_on_a_thread_gone_after([] {});
  ASSERT_NE(gone, 0u);
  const auto others = other_threads();
  ASSERT_TRUE(others);
  EXPECT_FALSE(contains(*others, gone));
}

// attach: the program's thread that loads the agent is parked, and is no
// other thread for a direct jump.
TEST(OtherThreads, TheParkedThreadIsNoOther) {
  const auto before = other_threads();
  ASSERT_TRUE(before);
  if (!before->empty()) GTEST_SKIP() << "this test process has threads of its own";
  EXPECT_TRUE(no_other_threads());
  const Waiters waiter(1);
  EXPECT_FALSE(no_other_threads());
  set_parked_thread(waiter.tids()[0]);
  EXPECT_TRUE(no_other_threads());
  set_parked_thread(0);
  EXPECT_FALSE(no_other_threads());
}

TEST(OtherThreads, NotListedWhileTheProgramsOpenLasts) {
  enter_program_open();
  const auto others = other_threads();
  leave_program_open();
  EXPECT_FALSE(others) << "listed through the program's open";
  EXPECT_TRUE(other_threads()) << "once it is over";
}

// ---- Places no thread's pc shows -----------------------------------------------

bool has_place(const std::vector<arch::InterruptedPlace>& places, uint64_t pc) {
  return std::any_of(places.begin(), places.end(),
                     [&](const arch::InterruptedPlace& place) { return place.pc == pc; });
}

TEST(HiddenReturnPlaces, TheCallerPlacesUntilForgotten) {
  const std::array<uint64_t, 2> callers{0x401000, 0x402000};
  set_caller_places(callers);
  const auto places = hidden_return_places();
  ASSERT_TRUE(places);
  EXPECT_TRUE(has_place(*places, 0x401000));
  EXPECT_TRUE(has_place(*places, 0x402000));
  set_caller_places({});
  const auto forgotten = hidden_return_places();
  ASSERT_TRUE(forgotten);
  EXPECT_FALSE(has_place(*forgotten, 0x401000));
  EXPECT_FALSE(has_place(*forgotten, 0x402000));
}

TEST(HiddenReturnPlaces, AtMostFourCallerPlaces) {
  const std::array<uint64_t, 5> callers{0x1000, 0x2000, 0x3000, 0x4000, 0x5000};
  set_caller_places(callers);
  const auto places = hidden_return_places();
  set_caller_places({});
  ASSERT_TRUE(places);
  for (const uint64_t pc : {0x1000u, 0x2000u, 0x3000u, 0x4000u})
    EXPECT_TRUE(has_place(*places, pc));
  EXPECT_FALSE(has_place(*places, 0x5000));
}

// The parked thread waits in the kernel: where it goes back to, and the
// syscall a restart takes it to.
TEST(HiddenReturnPlaces, TheParkedThreadsPcAndTheSyscallBeforeIt) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  std::atomic<uint32_t> tid{0};
  std::thread parked([&] {
    tid.store(arch::raw_gettid());
    char byte;
    (void)!::read(pipe_fds[0], &byte, 1);
  });
  while (tid.load() == 0) std::this_thread::yield();
  set_parked_thread(tid.load());
  const bool settled = parked_thread_settled();
  const auto places = hidden_return_places();
  set_parked_thread(0);
  (void)!::write(pipe_fds[1], "x", 1);
  parked.join();
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ASSERT_TRUE(settled);
  ASSERT_TRUE(places);
  EXPECT_TRUE(std::any_of(places->begin(), places->end(), [&](const arch::InterruptedPlace& at) {
    return at.pc != 0 && has_place(*places, at.pc - arch::kSyscallInsnBytes);
  })) << "no pc with its syscall before it";
}

TEST(HiddenReturnPlaces, NoneKnownWhileTheParkedThreadIsNotSeenWaiting) {
  const uint32_t gone = test::run_on_a_thread_gone_after([] {});
  ASSERT_NE(gone, 0u);
  set_parked_thread(gone);
  const auto places = hidden_return_places();
  set_parked_thread(0);
  EXPECT_FALSE(places);
}

}  // namespace
}  // namespace dprobe::agent
