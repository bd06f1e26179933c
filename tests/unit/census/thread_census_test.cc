// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The jump optimizer's census of threads (agent/thread_census.h), on real
// threads of this process: one waiting in the kernel is seen without a
// signal, one on a core is asked, one spinning in the middle of a range is
// moved to the copy (and so leaves a loop it could never leave in place),
// one in a probe's slot is moved to its place in the copy, one where no
// such place is keeps that range, and that range only, from being clear.
#include "agent/thread_census.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "support/patience.h"

namespace dprobe::agent {
namespace {

using namespace std::chrono_literals;
using core::DisplacedRange;

std::atomic<int> g_questions{0};

void on_question(int sig, siginfo_t* info, void* context) {
  if (!answer_question(sig, info, *static_cast<ucontext_t*>(context))) std::abort();
  g_questions.fetch_add(1);
}

// Two pieces of code: the "original", an instruction and then a loop on
// itself (a thread that enters it never leaves), and its "copy", the same
// instruction and then a return.
#if defined(__x86_64__)
constexpr uint8_t kLoop[] = {0x90, 0xeb, 0xfe};  // nop; jmp .
constexpr uint8_t kCopy[] = {0x90, 0xc3};        // nop; ret
#elif defined(__aarch64__)
constexpr uint8_t kLoop[] = {0x1f, 0x20, 0x03, 0xd5, 0x00, 0x00, 0x00, 0x14};  // nop; b .
constexpr uint8_t kCopy[] = {0x1f, 0x20, 0x03, 0xd5, 0xc0, 0x03, 0x5f, 0xd6};  // nop; ret
#endif

class Census : public ::testing::Test {
 protected:
  void SetUp() override {
    struct sigaction action = {};
    action.sa_sigaction = on_question;
    action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
    ASSERT_EQ(::sigaction(kQuestionSignal, &action, &saved_), 0);
    void* page =
        ::mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    code_ = static_cast<uint8_t*>(page);
    std::memcpy(code_, kLoop, sizeof(kLoop));
    std::memcpy(code_ + kPage, kCopy, sizeof(kCopy));
    ASSERT_EQ(::mprotect(page, 2 * kPage, PROT_READ | PROT_EXEC), 0);
    __builtin___clear_cache(reinterpret_cast<char*>(code_),
                            reinterpret_cast<char*>(code_) + 2 * kPage);
    g_questions.store(0);
  }
  void TearDown() override {
    ::sigaction(kQuestionSignal, &saved_, nullptr);
    ::munmap(code_, 2 * kPage);
  }

  uint64_t loop() const { return reinterpret_cast<uint64_t>(code_); }
  uint64_t copy() const { return reinterpret_cast<uint64_t>(code_ + kPage); }
  // The loop's bytes as a range whose copy lets a thread out.
  DisplacedRange loop_range() const { return {loop(), loop() + sizeof(kLoop), copy(), 0, 0}; }
  // Somewhere no thread runs.
  DisplacedRange elsewhere() const {
    return {copy() + 64, copy() + 80, copy() + 128, copy() + 256, copy() + 320};
  }

  // A thread that runs into the loop; `left` once it got out.
  std::thread enter_loop(std::atomic<bool>& left) const {
    const auto code = reinterpret_cast<void (*)()>(code_);
    return std::thread([code, &left] {
      code();
      left.store(true);
    });
  }

  static constexpr size_t kPage = 4096;
  uint8_t* code_ = nullptr;
  struct sigaction saved_ = {};
};

bool eventually(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + support::patience();
  while (!flag.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  return flag.load();
}

TEST_F(Census, AThreadWaitingInTheKernelIsSeenThereWithoutASignal) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  std::thread reader([&] {
    char byte;
    (void)!::read(pipe_fds[0], &byte, 1);
  });
  std::this_thread::sleep_for(20ms);  // into read()
  const auto clear = clear_threads({elsewhere()});
  ASSERT_TRUE(clear) << clear.error();
  EXPECT_EQ(*clear, std::vector<bool>{true});
  EXPECT_EQ(g_questions.load(), 0);
  (void)!::write(pipe_fds[1], "x", 1);
  reader.join();
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST_F(Census, AThreadSpinningOutsideEveryRangeIsClear) {
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  for (int i = 0; i < 20; ++i) {
    const auto clear = clear_threads({elsewhere(), loop_range()});
    ASSERT_TRUE(clear) << clear.error();
    EXPECT_EQ(*clear, (std::vector<bool>{true, true}));
  }
  stop.store(true);
  spinner.join();
}

TEST_F(Census, AThreadInsideARangeIsMovedToItsPlaceInTheCopy) {
  std::atomic<bool> left{false};
  std::thread looping = enter_loop(left);
  std::this_thread::sleep_for(20ms);
  ASSERT_FALSE(left.load());
  const auto clear = clear_threads({elsewhere(), loop_range()});
  ASSERT_TRUE(clear) << clear.error();
  EXPECT_EQ(*clear, (std::vector<bool>{true, true}));
  EXPECT_GE(g_questions.load(), 1);
  ASSERT_TRUE(eventually(left)) << "the thread was not moved out of the loop";
  looping.join();
}

// A thread in a probe's out-of-line slot (sent there by a trap before
// traps went to the trampoline, and not run since) is at the slot's copy
// of the first displaced instruction or at its jump back past it: moved to
// the same place in the trampoline's copy, where the next instruction is.
TEST_F(Census, AThreadInAProbesSlotIsMovedToItsPlaceInTheCopy) {
  std::atomic<bool> left{false};
  std::thread looping = enter_loop(left);
  std::this_thread::sleep_for(20ms);
  // The loop stands for a slot now (nop, then its "jump back", where the
  // thread spins), the copy for the trampoline's (nop, then ret).
  const DisplacedRange slotted{copy() + 512, copy() + 514, copy(), loop(), loop() + sizeof(kLoop)};
  const auto clear = clear_threads({elsewhere(), slotted});
  ASSERT_TRUE(clear) << clear.error();
  EXPECT_EQ(*clear, (std::vector<bool>{true, true}));
  ASSERT_TRUE(eventually(left)) << "the thread was not moved out of the slot";
  looping.join();
}

// Past the place of the last displaced instruction a slot holds no
// boundary a thread could be moved from: that range, and it only, is not
// clear.
TEST_F(Census, AThreadFurtherIntoASlotKeepsThatRangeOnlyFromBeingClear) {
  std::atomic<bool> left{false};
  std::thread looping = enter_loop(left);
  std::this_thread::sleep_for(20ms);
  const DisplacedRange slotted{copy() + 512, copy() + 512, copy() + 1024, loop(),
                               loop() + sizeof(kLoop)};
  const auto clear = clear_threads({elsewhere(), slotted});
  ASSERT_TRUE(clear) << clear.error();
  EXPECT_EQ(*clear, (std::vector<bool>{true, false}));
  EXPECT_FALSE(left.load());
  ASSERT_TRUE(clear_threads({loop_range()}));  // let it go
  ASSERT_TRUE(eventually(left));
  looping.join();
}

// The child of vfork runs this process's code in its memory until it
// execs or exits, and is no thread of it: while a thread waits in vfork
// nothing is clear, and that is said; once the child is gone, it is.
int sleep_and_exit(void*) {
  const timespec nap{0, 300'000'000};
  ::syscall(SYS_nanosleep, &nap, nullptr);
  ::syscall(SYS_exit, 0);
  return 0;
}

TEST_F(Census, AThreadInVforkKeepsEveryRangeFromBeingClear) {
  static char child_stack[64 * 1024];
  std::atomic<bool> back{false};
  std::thread parent([&] {
    const int pid = ::clone(sleep_and_exit, child_stack + sizeof(child_stack),
                            CLONE_VM | CLONE_VFORK | SIGCHLD, nullptr);
    if (pid > 0) ::waitpid(pid, nullptr, 0);
    back.store(true);
  });
  std::this_thread::sleep_for(50ms);  // into clone, the child asleep
  ASSERT_FALSE(back.load());
  const auto waiting = clear_threads({elsewhere()});
  ASSERT_FALSE(waiting);
  EXPECT_NE(waiting.error().find("waits in vfork"), std::string::npos) << waiting.error();
  EXPECT_EQ(g_questions.load(), 0) << "a thread in vfork is not asked";
  parent.join();
  const auto after = clear_threads({elsewhere()});
  ASSERT_TRUE(after) << after.error();
  EXPECT_EQ(*after, std::vector<bool>{true});
}

#if defined(__x86_64__)
// A thread in a signal handler returns, once the handler is done, to the
// place in its signal frame: a range around that place is not clear, if
// the handler waits in the kernel (seen there, its stack read from here,
// never asked) or runs on a core (asked: its own stack read in the
// answer). Once it returned, the range is clear again.
std::atomic<uint64_t> g_interrupted_pc{0};
std::atomic<bool> g_handler_may_return{false};
std::atomic<bool> g_handler_spins{false};
// The waiting handler blocks in read() on this pipe until a byte comes: it
// never wakes by itself (a periodic sleep would leave it runnable, and so
// asked, whenever a busy machine is slow to run it).
int g_release[2] = {-1, -1};

void on_usr1_wait(int, siginfo_t*, void* context) {
  const auto& interrupted = static_cast<ucontext_t*>(context)->uc_mcontext;
  g_interrupted_pc.store(static_cast<uint64_t>(interrupted.gregs[REG_RIP]));
  if (!g_handler_spins.load()) {
    char byte;
    while (::read(g_release[0], &byte, 1) < 0 && errno == EINTR) {
    }
    return;
  }
  while (!g_handler_may_return.load()) {
  }
}

// Whether thread `tid` of this process sleeps in the kernel (state S).
bool sleeping(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'S';
}

class CensusOfHandlers : public Census {
 protected:
  void SetUp() override {
    Census::SetUp();
    g_interrupted_pc.store(0);
    g_handler_may_return.store(false);
    struct sigaction action = {};
    action.sa_sigaction = on_usr1_wait;
    action.sa_flags = SA_SIGINFO;
    ASSERT_EQ(::sigaction(SIGUSR1, &action, &saved_usr1_), 0);
  }
  void TearDown() override {
    ::sigaction(SIGUSR1, &saved_usr1_, nullptr);
    Census::TearDown();
  }
  // Range [pc - 1, pc + 3) around where the handler returns, its copy elsewhere.
  static DisplacedRange around(uint64_t pc) { return {pc - 1, pc + 3, pc + 4096, 0, 0}; }

  // The worker spins in plain code when the signal comes (its place is
  // there, not in a system call the handler also waits in).
  void check_handler(bool spins) {
    g_handler_spins.store(spins);
    std::atomic<bool> spinning{false};
    std::atomic<bool> stop{false};
    std::atomic<pid_t> worker_tid{0};
    ASSERT_EQ(::pipe(g_release), 0);
    std::thread worker([&] {
      worker_tid.store(static_cast<pid_t>(::syscall(SYS_gettid)));
      spinning.store(true);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
    while (!spinning.load()) std::this_thread::yield();
    std::this_thread::sleep_for(5ms);
    ::pthread_kill(worker.native_handle(), SIGUSR1);
    const auto deadline = std::chrono::steady_clock::now() + support::patience();
    while (g_interrupted_pc.load() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    const uint64_t pc = g_interrupted_pc.load();
    ASSERT_NE(pc, 0u);
    // Into its wait: seen asleep (however long a busy machine takes).
    while (!spins && !sleeping(worker_tid.load()) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    const auto inside = clear_threads({elsewhere(), around(pc)});
    ASSERT_TRUE(inside) << inside.error();
    EXPECT_EQ(*inside, (std::vector<bool>{true, false}));
    if (spins) {
      EXPECT_GE(g_questions.load(), 1);
    } else {
      EXPECT_EQ(g_questions.load(), 0) << "a thread seen waiting in a handler is not asked";
    }
    g_handler_may_return.store(true);
    ASSERT_EQ(::write(g_release[1], "x", 1), 1);
    stop.store(true);
    worker.join();
    ::close(g_release[0]);
    ::close(g_release[1]);
    const auto after = clear_threads({elsewhere(), around(pc)});
    ASSERT_TRUE(after) << after.error();
    EXPECT_EQ(*after, (std::vector<bool>{true, true}));
  }

  struct sigaction saved_usr1_ = {};
};

TEST_F(CensusOfHandlers, AHandlerWaitingInTheKernelKeepsTheRangeItReturnsIntoFromBeingClear) {
  check_handler(/*spins=*/false);
}

TEST_F(CensusOfHandlers, AHandlerOnACoreKeepsTheRangeItReturnsIntoFromBeingClear) {
  check_handler(/*spins=*/true);
}
#endif

TEST_F(Census, AQuestionNotOfTheCensusIsNotAnswered) {
  siginfo_t info = {};
  info.si_signo = kQuestionSignal;
  info.si_code = SI_QUEUE;
  info.si_pid = ::getpid();
  info.si_value.sival_ptr = reinterpret_cast<void*>(uint64_t{42});
  ucontext_t context = {};
  EXPECT_FALSE(answer_question(kQuestionSignal, &info, context));
  info.si_code = SEGV_MAPERR;
  EXPECT_FALSE(answer_question(kQuestionSignal, &info, context));
  EXPECT_FALSE(answer_question(SIGTRAP, &info, context));
}

}  // namespace
}  // namespace dprobe::agent
