// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The gate between the agent's own opens and the program's calls that take
// a descriptor (agent/descriptor_gate.h): never both at once, the program
// waits out the agent, the agent gives up after 100 ms of the program's,
// and a hold whose thread is gone (cancelled in the call; the parent's, in
// a forked child) is let go. The gate is the process's: every test leaves
// it open.
#include "agent/hit/descriptor_gate.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "unit/agent/gone_thread.h"

namespace dprobe::agent {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// How long the agent tries before it does without the file
// (descriptor_gate.cc: 2000 tries, 50 us apart at least).
constexpr auto kAgentPatience = 100ms;

TEST(TakesDescriptor, TheCallsThatGiveTheProgramADescriptor) {
  for (const long nr : {SYS_openat,
                        SYS_openat2,
                        SYS_open_by_handle_at,
                        SYS_dup,
                        SYS_dup3,
                        SYS_fcntl,
                        SYS_socket,
                        SYS_socketpair,
                        SYS_accept,
                        SYS_accept4,
                        SYS_recvmsg,
                        SYS_recvmmsg,
                        SYS_pipe2,
                        SYS_eventfd2,
                        SYS_epoll_create1,
                        SYS_signalfd4,
                        SYS_timerfd_create,
                        SYS_inotify_init1,
                        SYS_fanotify_init,
                        SYS_memfd_create,
                        SYS_userfaultfd,
                        SYS_perf_event_open,
                        SYS_pidfd_open,
                        SYS_pidfd_getfd,
                        SYS_io_uring_setup,
                        SYS_mq_open,
                        SYS_bpf,
                        SYS_open_tree,
                        SYS_fsopen,
                        SYS_fspick,
                        SYS_fsmount}) {
    EXPECT_TRUE(takes_descriptor(nr)) << "system call " << nr;
  }
#ifdef SYS_open
  for (const long nr : {SYS_open, SYS_creat, SYS_dup2, SYS_pipe, SYS_eventfd, SYS_epoll_create,
                        SYS_signalfd, SYS_inotify_init}) {
    EXPECT_TRUE(takes_descriptor(nr)) << "legacy system call " << nr;
  }
#endif
}

TEST(TakesDescriptor, NotTheCallsThatUseOrCloseOne) {
  for (const long nr : {SYS_read, SYS_write, SYS_close, SYS_close_range, SYS_mmap, SYS_ioctl,
                        SYS_getpid, SYS_futex, SYS_clone, SYS_execve, SYS_exit_group}) {
    EXPECT_FALSE(takes_descriptor(nr)) << "system call " << nr;
  }
  EXPECT_FALSE(takes_descriptor(-1)) << "not in a system call";
  EXPECT_FALSE(takes_descriptor(100000));
}

// The quickest of a few tries at entering the agent's side: a gate that
// waited would make every one last its patience, while a busy machine
// delays one now and then.
Clock::duration quickest_agent_entry() {
  Clock::duration quickest = Clock::duration::max();
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto start = Clock::now();
    EXPECT_TRUE(enter_agent_open());
    leave_agent_open();
    quickest = std::min(quickest, Clock::now() - start);
  }
  return quickest;
}

TEST(DescriptorGate, TheAgentOpensAtOnceWhileTheProgramOpensNothing) {
  EXPECT_LT(quickest_agent_entry(), kAgentPatience);
}

TEST(DescriptorGate, TheProgramsOpenWaitsOutTheAgents) {
  ASSERT_TRUE(enter_agent_open());
  std::atomic<bool> in{false};
  std::thread program([&] {
    enter_program_open();
    in.store(true);
    leave_program_open();
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(in.load()) << "the program opened while the agent did";
  leave_agent_open();
  program.join();
  EXPECT_TRUE(in.load());
}

TEST(DescriptorGate, TheAgentGivesUpWhileTheProgramsOpenLasts) {
  enter_program_open();  // a FIFO's open, say, that waits for a writer
  const auto start = Clock::now();
  char buffer[16];
  const long read = read_file_through_gate("/proc/self/stat", buffer, sizeof(buffer));
  const auto waited = Clock::now() - start;
  leave_program_open();
  EXPECT_EQ(read, -1) << "read while the program's open lasts";
  EXPECT_GE(waited, kAgentPatience);
  ASSERT_TRUE(enter_agent_open()) << "the program's open is over";
  leave_agent_open();
}

// One round: the program holds its open for 20 ms while the agent asks;
// whether the agent got in before its patience ran out.
bool agent_goes_on_after_a_short_open() {
  std::atomic<bool> holding{false};
  std::thread program([&] {
    enter_program_open();
    holding.store(true);
    std::this_thread::sleep_for(20ms);
    leave_program_open();
  });
  while (!holding.load()) std::this_thread::yield();
  const auto start = Clock::now();
  const bool entered = enter_agent_open();
  const auto waited = Clock::now() - start;
  program.join();
  if (entered) leave_agent_open();
  return entered && waited < kAgentPatience;
}

// A busy machine may keep the program's thread from leaving in time once;
// a gate that never lets the agent on after an open fails every round.
TEST(DescriptorGate, TheAgentGoesOnOnceTheProgramsOpenEnds) {
  bool went_on = false;
  for (int round = 0; round < 3 && !went_on; ++round) went_on = agent_goes_on_after_a_short_open();
  EXPECT_TRUE(went_on) << "the agent waited out its whole patience, three times";
}

// pthread_cancel unwinds a thread out of the call: it never leaves the
// gate. Once it is gone the agent lets its hold go, and the gate works on.
TEST(DescriptorGate, AHoldOfAThreadThatIsGoneIsLetGo) {
  ASSERT_NE(test::run_on_a_thread_gone_after([] { enter_program_open(); }), 0u);
  ASSERT_TRUE(enter_agent_open()) << "the gone thread's hold kept the agent out";
  leave_agent_open();
  enter_program_open();
  leave_program_open();
  EXPECT_LT(quickest_agent_entry(), kAgentPatience) << "the released hold was counted twice";
}

// A forked child has the parent's counts but none of its threads.
TEST(DescriptorGate, InAForkedChildTheParentsHoldIsLetGo) {
  enter_program_open();
  const pid_t child = ::fork();
  if (child == 0) {
    const bool entered = enter_agent_open();
    if (entered) leave_agent_open();
    ::_exit(entered ? 0 : 1);
  }
  leave_program_open();
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's agent stayed out";
}

// Program threads open and the agent opens, over and over, until each
// side had its turns: never both at once. Each side pauses between its
// opens, as the agent's census does: the program's side waits out every
// open of the agent's, so an agent opening without a pause starves it.
TEST(DescriptorGate, TheProgramAndTheAgentAreNeverInsideAtOnce) {
  constexpr int kProgramThreads = 2;
  constexpr int kTurns = 100;  // each side's, at least
  std::atomic<int> program_inside{0};
  std::atomic<int> agent_inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> program_opens{0};
  std::atomic<int> agent_opens{0};
  auto both_had_turns = [&] {
    return program_opens.load() >= kTurns && agent_opens.load() >= kTurns;
  };
  // Stays inside a while (an open and a read), looking at the other side.
  auto stay = [&](std::atomic<int>& other) {
    const auto until = Clock::now() + 20us;
    while (Clock::now() < until) {
      if (other.load() != 0) overlaps.fetch_add(1);
    }
  };
  std::vector<std::thread> program;
  for (int t = 0; t < kProgramThreads; ++t) {
    program.emplace_back([&] {
      while (!both_had_turns()) {
        enter_program_open();
        program_inside.fetch_add(1);
        stay(agent_inside);
        program_inside.fetch_sub(1);
        leave_program_open();
        program_opens.fetch_add(1);
        std::this_thread::sleep_for(10us);
      }
    });
  }
  while (!both_had_turns()) {
    if (!enter_agent_open()) continue;
    agent_inside.fetch_add(1);
    stay(program_inside);
    agent_inside.fetch_sub(1);
    leave_agent_open();
    agent_opens.fetch_add(1);
    std::this_thread::sleep_for(10us);
  }
  for (std::thread& thread : program) thread.join();
  EXPECT_EQ(overlaps.load(), 0);
}

class ReadThroughGate : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/dprobe_gate_XXXXXX";
    const int fd = ::mkstemp(name);
    ASSERT_GE(fd, 0);
    path_ = name;
    ASSERT_EQ(::write(fd, kText, sizeof(kText) - 1), static_cast<ssize_t>(sizeof(kText) - 1));
    ::close(fd);
  }
  void TearDown() override { ::unlink(path_.c_str()); }

  static constexpr char kText[] = "0 0x3 0x7ffd 0x10\n";
  std::string path_;
};

TEST_F(ReadThroughGate, ReadsTheFilesStart) {
  char buffer[64] = {};
  const long n = read_file_through_gate(path_.c_str(), buffer, sizeof(buffer));
  ASSERT_EQ(n, static_cast<long>(sizeof(kText) - 1));
  EXPECT_EQ(std::string(buffer, static_cast<size_t>(n)), kText);
}

TEST_F(ReadThroughGate, ReadsNoMoreThanTheBufferHolds) {
  char buffer[8] = {};
  const long n = read_file_through_gate(path_.c_str(), buffer, 5);
  EXPECT_EQ(n, 5);
  EXPECT_EQ(std::string(buffer, 5), "0 0x3");
  EXPECT_EQ(buffer[5], '\0') << "written past the capacity";
}

TEST_F(ReadThroughGate, AFileThatCannotBeOpenedReadsAsNothing) {
  char buffer[16];
  EXPECT_EQ(read_file_through_gate((path_ + ".none").c_str(), buffer, sizeof(buffer)), 0);
  ASSERT_EQ(::truncate(path_.c_str(), 0), 0);
  EXPECT_EQ(read_file_through_gate(path_.c_str(), buffer, sizeof(buffer)), 0) << "empty";
  EXPECT_EQ(read_file_through_gate("/proc/self", buffer, sizeof(buffer)), 0) << "a directory";
}

// Why nothing was read: a file that is not there, or no descriptor free.
// The census tells a thread gone from one it could not look at by this
// (a thread it could not look at is asked, never taken as gone).
TEST_F(ReadThroughGate, SaysWhyNothingWasRead) {
  char buffer[16];
  long failure = 1;
  ASSERT_GT(read_file_through_gate(path_.c_str(), buffer, sizeof(buffer), &failure), 0);
  EXPECT_EQ(failure, 0);
  EXPECT_EQ(read_file_through_gate((path_ + ".none").c_str(), buffer, sizeof(buffer), &failure), 0);
  EXPECT_EQ(failure, -ENOENT);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit none_left = saved;
  none_left.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &none_left), 0);
  const long n = read_file_through_gate(path_.c_str(), buffer, sizeof(buffer), &failure);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(failure, -EMFILE);
}

// The agent's descriptor is closed again: the program's next open gets
// the descriptor it expects.
TEST_F(ReadThroughGate, LeavesNoDescriptorOpen) {
  const int before = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(before, 0);
  ::close(before);
  char buffer[16];
  ASSERT_GT(read_file_through_gate(path_.c_str(), buffer, sizeof(buffer)), 0);
  const int after = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(after, before);
  ::close(after);
}

}  // namespace
}  // namespace dprobe::agent
