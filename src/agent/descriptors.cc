// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// close(), close_range(), closefrom(), dup2() and dup3(), stood in front
// of so that a program that closes or reuses every descriptor number
// (close_range(3, ~0U, 0) at start, a loop closing 3..1024, dup2 over them
// all) cannot take the agent's own descriptors away (its /proc/self/mem,
// its control socket: arch/runtime/agent_descriptors.h). The program sees
// exactly what it would have seen without the agent:
//   - closing one of the agent's numbers fails with EBADF, as for any
//     number the program never opened; a range is closed around them;
//   - dup2/dup3 onto one of them succeeds: the agent's file moves to
//     another high number first; from one of them fails with EBADF.
// A raw system call passes these by: the agent then finds its number
// changed before the next use (fstat identity) and reopens /proc/self/mem,
// or ends its session cleanly when the socket is gone.
#include <dlfcn.h>
#include <errno.h>

#include "agent/interpose.h"
#include "arch/runtime/agent_descriptors.h"

#define DPROBE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using dprobe::agent::next_function;
using dprobe::arch::AgentDescriptor;
using dprobe::arch::AgentDescriptorTable;

bool agent_owns(int fd) { return AgentDescriptorTable::instance().holding(fd) != nullptr; }

int bad_descriptor() {
  errno = EBADF;
  return -1;
}

// The program takes the number `fd` for a file of its own.
void step_aside(int fd) {
  if (AgentDescriptor* ours = AgentDescriptorTable::instance().holding(fd)) ours->move_away();
}

// close_range over [first, last] but the agent's numbers in it.
int close_range_around(unsigned first, unsigned last, int flags) {
  using Fn = int (*)(unsigned, unsigned, int);
  static const Fn real = next_function<Fn>("close_range");
  if (real == nullptr) return bad_descriptor();
  return AgentDescriptorTable::instance().close_range_around(
      first, last, [&](unsigned from, unsigned to) { return real(from, to, flags); });
}

}  // namespace

DPROBE_EXPORT int close(int fd) {
  using Fn = int (*)(int);
  static const Fn real = next_function<Fn>("close");
  if (agent_owns(fd)) return bad_descriptor();
  return real(fd);
}

DPROBE_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  return close_range_around(first, last, flags);
}

// glibc's closefrom calls the system call itself: the agent's numbers
// would go with it.
DPROBE_EXPORT void closefrom(int lowest) {
  if (lowest < 0) return;
  const int saved = errno;
  close_range_around(static_cast<unsigned>(lowest), ~0U, 0);
  errno = saved;
}

DPROBE_EXPORT int dup2(int old_fd, int new_fd) {
  using Fn = int (*)(int, int);
  static const Fn real = next_function<Fn>("dup2");
  if (agent_owns(old_fd)) return bad_descriptor();
  step_aside(new_fd);
  return real(old_fd, new_fd);
}

DPROBE_EXPORT int dup3(int old_fd, int new_fd, int flags) {
  using Fn = int (*)(int, int, int);
  static const Fn real = next_function<Fn>("dup3");
  if (old_fd == new_fd) return real(old_fd, new_fd, flags);  // EINVAL before anything
  if (agent_owns(old_fd)) return bad_descriptor();
  step_aside(new_fd);
  return real(old_fd, new_fd, flags);
}
