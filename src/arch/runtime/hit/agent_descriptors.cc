// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What of the agent's descriptors (arch/runtime/agent_descriptors.h) the
// hit path runs: a rewritten system call site's close, close_range, dup2
// or dup3 steps around them.
#include "arch/runtime/agent_descriptors.h"

#include <sys/resource.h>

#include "base/hit_path.h"

namespace dprobe::arch {

DPROBE_HIT_PATH int duplicate_from(int fd, uint64_t floor) noexcept {
  const long copy = raw_syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, static_cast<long>(floor));
  return raw_failed(copy) ? -1 : static_cast<int>(copy);
}

DPROBE_HIT_PATH int duplicate_high(int fd) noexcept {
  struct rlimit limit {};
  if (raw_failed(raw_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, raw_arg(&limit)))) {
    return duplicate_from(fd, 3);
  }
  constexpr uint64_t kRoom = 16;
  if (limit.rlim_cur < (1u << 16) && limit.rlim_max >= limit.rlim_cur + kRoom) {
    struct rlimit raised = limit;
    raised.rlim_cur = limit.rlim_cur + kRoom;
    if (!raw_failed(raw_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, raw_arg(&raised), 0))) {
      const int above = duplicate_from(fd, limit.rlim_cur);
      raw_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, raw_arg(&limit), 0);
      if (above >= 0) return above;
    }
  }
  const int below =
      duplicate_from(fd, static_cast<uint64_t>(agent_descriptor_floor(limit.rlim_cur)));
  return below >= 0 ? below : duplicate_from(fd, 3);
}

DPROBE_HIT_PATH AgentDescriptor* AgentDescriptorTable::holding(int fd) const noexcept {
  if (fd < 0) return nullptr;
  for (const auto& slot : slots_) {
    AgentDescriptor* descriptor = slot.load(std::memory_order_acquire);
    if (descriptor != nullptr && descriptor->fd() == fd) return descriptor;
  }
  return nullptr;
}

DPROBE_HIT_PATH int AgentDescriptorTable::lowest_in(unsigned first, unsigned last) const noexcept {
  int lowest = -1;
  for (const auto& slot : slots_) {
    const AgentDescriptor* descriptor = slot.load(std::memory_order_acquire);
    const int fd = descriptor != nullptr ? descriptor->fd() : -1;
    if (fd < 0 || static_cast<unsigned>(fd) < first || static_cast<unsigned>(fd) > last) continue;
    if (lowest < 0 || fd < lowest) lowest = fd;
  }
  return lowest;
}

DPROBE_HIT_PATH bool AgentDescriptor::move_away() noexcept {
  const int fd = fd_.load(std::memory_order_acquire);
  if (fd < 0) return true;
  const int other = duplicate_high(fd);
  if (other < 0) return false;
  fd_.store(other, std::memory_order_release);
  return true;
}

}  // namespace dprobe::arch
