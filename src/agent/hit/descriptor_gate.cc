// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit/descriptor_gate.h"

#include <fcntl.h>
#include <sys/syscall.h>

#include <atomic>
#include <ctime>

#include "arch/runtime/raw_syscall.h"
#include "base/hit_path.h"

namespace dprobe::agent {
namespace {

// Each side announces itself, then looks at the other (sequentially
// consistent): of two that overlap, at least one sees the other and backs
// off, so they never both go on.
std::atomic<int> g_agent_opening{0};
std::atomic<int> g_program_opening{0};

constexpr int kAgentTries = 2000;  // of 50 us: 100 ms

// The threads in the program's calls, by id: a thread cancelled in one
// (pthread_cancel unwinds it out of the call) never leaves, and the agent
// lets its hold go once the thread is gone. A hold past the table's room
// is counted only.
constexpr uint32_t kHolders = 64;
std::atomic<uint32_t> g_holders[kHolders];

DPROBE_HIT_PATH void pause_50us() {
  const timespec pause{0, 50000};
  arch::raw_syscall(SYS_nanosleep, arch::raw_arg(&pause), 0);
}

DPROBE_HIT_PATH void note_holder(uint32_t tid) {
  for (std::atomic<uint32_t>& holder : g_holders) {
    uint32_t free = 0;
    if (holder.load(std::memory_order_relaxed) == 0 && holder.compare_exchange_strong(free, tid)) {
      return;
    }
  }
}

DPROBE_HIT_PATH void forget_holder(uint32_t tid) {
  for (std::atomic<uint32_t>& holder : g_holders) {
    uint32_t mine = tid;
    if (holder.load(std::memory_order_relaxed) == tid && holder.compare_exchange_strong(mine, 0)) {
      return;
    }
  }
}

// The holds of threads that are gone (cancelled in the call, or, in a
// forked child, the parent's): let go. Whether any was.
DPROBE_HIT_PATH bool release_gone_holders() {
  const uint32_t pid = arch::own_pid();
  bool released = false;
  for (std::atomic<uint32_t>& holder : g_holders) {
    uint32_t tid = holder.load();
    if (tid == 0 || arch::raw_thread_alive(pid, tid)) continue;
    if (holder.compare_exchange_strong(tid, 0)) {
      g_program_opening.fetch_sub(1);
      released = true;
    }
  }
  return released;
}

}  // namespace

bool enter_agent_open() noexcept {
  for (int tries = 0; tries < kAgentTries; ++tries) {
    g_agent_opening.fetch_add(1);
    if (g_program_opening.load() == 0) return true;
    g_agent_opening.fetch_sub(1);
    if (tries % 200 == 199 && release_gone_holders()) continue;
    pause_50us();
  }
  return false;
}

void leave_agent_open() noexcept { g_agent_opening.fetch_sub(1); }

DPROBE_HIT_PATH void enter_program_open() noexcept {
  while (true) {
    g_program_opening.fetch_add(1);
    if (g_agent_opening.load() == 0) break;
    g_program_opening.fetch_sub(1);
    arch::raw_syscall(SYS_sched_yield);
  }
  note_holder(arch::raw_gettid());
}

DPROBE_HIT_PATH void leave_program_open() noexcept {
  forget_holder(arch::raw_gettid());
  g_program_opening.fetch_sub(1);
}

DPROBE_HIT_PATH bool takes_descriptor(long nr) noexcept {
  switch (nr) {
#ifdef SYS_open  // the legacy calls: x86_64 has them, arm64's table does not
    case SYS_open:
    case SYS_creat:
    case SYS_dup2:
    case SYS_pipe:
    case SYS_eventfd:
    case SYS_epoll_create:
    case SYS_signalfd:
    case SYS_inotify_init:
#endif
    case SYS_openat:
    case SYS_openat2:
    case SYS_open_by_handle_at:
    case SYS_dup:
    case SYS_dup3:
    case SYS_fcntl:  // F_DUPFD
    case SYS_socket:
    case SYS_socketpair:
    case SYS_accept:
    case SYS_accept4:
    case SYS_recvmsg:  // SCM_RIGHTS
    case SYS_recvmmsg:
    case SYS_pipe2:
    case SYS_eventfd2:
    case SYS_epoll_create1:
    case SYS_signalfd4:
    case SYS_timerfd_create:
    case SYS_inotify_init1:
    case SYS_fanotify_init:
    case SYS_memfd_create:
    case SYS_userfaultfd:
    case SYS_perf_event_open:
    case SYS_pidfd_open:
    case SYS_pidfd_getfd:
    case SYS_io_uring_setup:
    case SYS_mq_open:
    case SYS_bpf:
    case SYS_open_tree:
    case SYS_fsopen:
    case SYS_fspick:
    case SYS_fsmount:
      return true;
    default:
      return false;
  }
}

long read_file_through_gate(const char* path, char* buffer, size_t capacity,
                            long* failure) noexcept {
  if (!enter_agent_open()) return -1;
  const long fd =
      arch::raw_syscall(SYS_openat, AT_FDCWD, arch::raw_arg(path), O_RDONLY | O_CLOEXEC);
  long n = fd;
  if (!arch::raw_failed(fd)) {
    n = arch::raw_syscall(SYS_read, fd, arch::raw_arg(buffer), static_cast<long>(capacity));
    arch::raw_syscall(SYS_close, fd);
  }
  leave_agent_open();
  if (failure != nullptr) *failure = arch::raw_failed(n) ? n : 0;
  return n > 0 ? n : 0;
}

}  // namespace dprobe::agent
