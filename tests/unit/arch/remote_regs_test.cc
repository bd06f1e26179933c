// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The host ISA's remote registers (what `dprobe attach` reads through
// ptrace): a child blocked in a system call is seen as in one at its
// ptrace stop, a child spinning in user code is not. On arm64 the kernel
// has forgotten the call by then and rewound the pc onto its svc: the
// bytes at the pc tell.
#include "arch/runtime/remote_regs.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace dprobe::arch {
namespace {

volatile uint64_t g_spin = 0;

// A child that never returns: blocked in read() on a pipe nobody writes,
// or spinning.
pid_t start_child(bool block) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    char byte;
    if (block) (void)!::read(fds[0], &byte, 1);
    for (;;) g_spin = g_spin + 1;
  }
  ::close(fds[0]);
  ::close(fds[1]);
  return pid;
}

struct Stopped {
  bool ok = false;
  RemoteRegs regs{};
  uint8_t code[4] = {};
};

// Seizes the child, stops it, reads its registers and the bytes at its pc.
Stopped stop_and_read(pid_t pid) {
  Stopped s;
  if (::ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) != 0) return s;
  if (::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr) != 0) return s;
  int status = 0;
  if (::waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status)) return s;
  if (!read_remote_regs(pid, s.regs)) return s;
  iovec local{s.code, sizeof(s.code)};
  iovec remote{reinterpret_cast<void*>(remote_pc(s.regs)), sizeof(s.code)};
  s.ok = ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof(s.code);
  return s;
}

void end_child(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, __WALL);
}

TEST(RemoteRegs, AChildBlockedInReadIsInASystemCall) {
  const pid_t pid = start_child(true);
  ASSERT_GT(pid, 0);
  ::usleep(200 * 1000);  // into the read
  const Stopped s = stop_and_read(pid);
  end_child(pid);
  ASSERT_TRUE(s.ok) << std::strerror(errno);
  EXPECT_TRUE(in_remote_syscall(s.regs, s.code));
}

TEST(RemoteRegs, AChildSpinningInItsOwnCodeIsNot) {
  const pid_t pid = start_child(false);
  ASSERT_GT(pid, 0);
  ::usleep(50 * 1000);
  const Stopped s = stop_and_read(pid);
  end_child(pid);
  ASSERT_TRUE(s.ok) << std::strerror(errno);
  EXPECT_FALSE(in_remote_syscall(s.regs, s.code));
}

}  // namespace
}  // namespace dprobe::arch
