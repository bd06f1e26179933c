// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's own file descriptors (/proc/self/mem, the control socket,
// the trace memory's memfd while it exists), kept out of the program's
// way. The program owns the numbers it sees: it may close every one of
// them at start (close_range, a loop to 1024) and open its own files in
// their place. So each of the agent's descriptors is
//   - placed high (F_DUPFD_CLOEXEC above the RLIMIT_NOFILE soft limit when
//     the hard one leaves room, else just under it), where the lowest-free
//     rule never hands the number to the program's open();
//   - registered here, so that the close/close_range/dup2/dup3 interposers
//     (agent/descriptors.cc) leave it alone and the program sees EBADF, as
//     for any number it never opened;
//   - recorded by identity (st_dev, st_ino), so that before each use the
//     agent can tell whether the number still is its own (a raw close
//     system call passes the interposers by).
// Everything here is raw system calls: it runs where libc may be probed.
//
//   auto* mem = new AgentDescriptor;        // registered by address
//   if (!mem->adopt(::open("/proc/self/mem", O_RDWR))) ...
//   if (!mem->intact()) ... reopen, or end the session
//   pwrite(mem->fd(), ...);
#ifndef DPROBE_ARCH_RUNTIME_AGENT_DESCRIPTORS_H_
#define DPROBE_ARCH_RUNTIME_AGENT_DESCRIPTORS_H_

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdint>

#include "arch/runtime/raw_syscall.h"
#include "base/hit_path.h"

namespace dprobe::arch {

// Below the soft limit, where the agent's descriptors go when they cannot
// go above it: a little under it (so the fd table the kernel keeps does
// not grow past what the program may use anyway), at most 64 Ki (a limit
// of millions would cost megabytes of fd table).
inline int agent_descriptor_floor(uint64_t soft) noexcept {
  if (soft < 256) return static_cast<int>(soft / 2);
  return static_cast<int>(soft - 64 < (1u << 16) ? soft - 64 : (1u << 16));
}

// A close-on-exec copy of `fd` at `floor` or above, -1 if none.
int duplicate_from(int fd, uint64_t floor) noexcept;

// A high close-on-exec copy of `fd`. Best above the soft RLIMIT_NOFILE,
// where no open(), dup2() or loop to sysconf(_SC_OPEN_MAX) of the
// program can reach: the soft limit is raised by a few for the one
// fcntl (when the hard limit allows) and put back at once. Else just
// under it; else anywhere. -1 if no number is free. (The hit path's: a
// program's dup2 over an agent's descriptor, in arch/runtime/hit/.)
int duplicate_high(int fd) noexcept;

// duplicate_high, and `fd` itself closed (also on failure).
inline int move_high(int fd) noexcept {
  if (fd < 0) return -1;
  const int high = duplicate_high(fd);
  raw_syscall(SYS_close, fd);
  return high;
}

class AgentDescriptor;

// Every descriptor the agent holds, for the interposers to step around.
class AgentDescriptorTable {
 public:
  static constexpr int kSlots = 16;
  DPROBE_HIT_PATH static AgentDescriptorTable& instance() noexcept {
    static AgentDescriptorTable table;  // constant-initialized: no guard, no allocation
    return table;
  }
  // The descriptor that holds number `fd`, or nullptr.
  AgentDescriptor* holding(int fd) const noexcept;
  // The lowest number it holds in [first, last], or -1.
  int lowest_in(unsigned first, unsigned last) const noexcept;
  // close_range over [first, last] but the agent's numbers in it:
  // close_gap(from, to) over each stretch between them, stopping at the
  // first that does not return 0 (first > last goes to close_gap as is,
  // for the kernel's EINVAL).
  template <typename CloseGap>
  DPROBE_HIT_PATH auto close_range_around(unsigned first, unsigned last,
                                          CloseGap close_gap) const noexcept {
    if (first > last) return close_gap(first, last);
    unsigned from = first;
    while (true) {
      const int held = lowest_in(from, last);
      if (held < 0) return close_gap(from, last);
      const auto at = static_cast<unsigned>(held);
      if (at > from) {
        if (const auto done = close_gap(from, at - 1); done != 0) return done;
      }
      if (at == last) return decltype(close_gap(from, last)){0};
      from = at + 1;
    }
  }
  void add(AgentDescriptor* descriptor) noexcept {
    for (auto& slot : slots_) {
      AgentDescriptor* empty = nullptr;
      if (slot.compare_exchange_strong(empty, descriptor)) return;
    }
  }
  void remove(AgentDescriptor* descriptor) noexcept {
    for (auto& slot : slots_) {
      AgentDescriptor* expected = descriptor;
      if (slot.compare_exchange_strong(expected, nullptr)) return;
    }
  }

 private:
  constexpr AgentDescriptorTable() = default;
  std::atomic<AgentDescriptor*> slots_[kSlots] = {};
};

// One descriptor of the agent's: high, registered, and known by identity.
// Registered by address: it stays where it was made (held by pointer).
class AgentDescriptor {
 public:
  AgentDescriptor() = default;
  AgentDescriptor(const AgentDescriptor&) = delete;
  AgentDescriptor& operator=(const AgentDescriptor&) = delete;
  ~AgentDescriptor() { release(); }

  // Takes `fd` (moved high, registered). False, and nothing held, when it
  // cannot be.
  bool adopt(int fd) noexcept { return adopt_in_place(move_high(fd)); }
  // Takes `fd` where it is (a number the program's environment names
  // already: agent/held_directories.h). False, and nothing held, when it
  // is no descriptor.
  bool adopt_in_place(int high) noexcept {
    release();
    if (high < 0) return false;
    struct stat st {};
    if (raw_failed(raw_syscall(SYS_fstat, high, raw_arg(&st)))) {
      raw_syscall(SYS_close, high);
      return false;
    }
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    fd_.store(high, std::memory_order_release);
    AgentDescriptorTable::instance().add(this);
    return true;
  }
  // Whether the number still refers to what was adopted.
  bool intact() const noexcept {
    const int fd = fd_.load(std::memory_order_acquire);
    if (fd < 0) return false;
    struct stat st {};
    if (raw_failed(raw_syscall(SYS_fstat, fd, raw_arg(&st)))) return false;
    return st.st_dev == dev_ && st.st_ino == ino_;
  }
  DPROBE_HIT_PATH int fd() const noexcept { return fd_.load(std::memory_order_acquire); }
  // The program asks for this very number (dup2 onto it): the agent's
  // file moves to another high number first, and the old one is the
  // program's to take.
  bool move_away() noexcept;
  // Closes it, if the number is still ours.
  void close() noexcept {
    const int fd = fd_.load(std::memory_order_acquire);
    if (fd >= 0 && intact()) raw_syscall(SYS_close, fd);
    release();
  }
  // Forgets the number without closing it (it is the program's now, or
  // another owner's).
  void release() noexcept {
    if (fd_.exchange(-1, std::memory_order_acq_rel) >= 0) {
      AgentDescriptorTable::instance().remove(this);
    }
  }

 private:
  std::atomic<int> fd_{-1};
  uint64_t dev_ = 0;
  uint64_t ino_ = 0;
};

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_AGENT_DESCRIPTORS_H_
