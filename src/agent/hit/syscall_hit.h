// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the system call tracing (syscall_dispatch.h) does on the program's
// thread at each call it sees: the session's events by number, the
// thread's selector, and the recording of a call's enter and exit. Both of
// its ways in use it: the dispatch's SIGSYS handler, and a rewritten
// site's trampoline (dprobe_syscall_enter / dprobe_syscall_exit, defined
// with this), which saved the general registers only: the hit path's
// rules hold here (base/hit_path.h).
#ifndef DPROBE_AGENT_HIT_SYSCALL_HIT_H_
#define DPROBE_AGENT_HIT_SYSCALL_HIT_H_

#include <sys/syscall.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "agent/hit/event_record.h"
#include "agent/hit/thread_trace.h"
#include "arch/probe_insn.h"
#include "base/hit_path.h"
#include "trace/trace_memory.h"

namespace dprobe::agent::dispatch {

// The kernel's interface (linux/prctl.h, asm-generic/siginfo.h), spelled
// out: Debian's headers may predate it.
inline constexpr long kPrSetSyscallUserDispatch = 59;
inline constexpr long kDispatchOff = 0;
inline constexpr long kDispatchOn = 1;
inline constexpr char kSelectorAllow = 0;
inline constexpr char kSelectorBlock = 1;

inline constexpr uint32_t kMaxNr = trace::kSyscallStatsCount;

// fork and vfork are x86_64's; arm64 has clone and clone3 only.
#ifdef SYS_fork
inline constexpr int64_t kSysFork = SYS_fork;
inline constexpr int64_t kSysVfork = SYS_vfork;
#else
inline constexpr int64_t kSysFork = -1;  // never a system call number
inline constexpr int64_t kSysVfork = -1;
#endif

// The session's events, by number. Read at every call, written once per
// session before any thread turns the dispatch on; an older one is never
// freed (a handler may hold it).
struct Filter {
  struct Range {
    uint16_t begin = 0;
    uint16_t end = 0;
  };
  std::vector<const AgentEvent*> events;  // per number: enter ones, then exit ones
  std::array<Range, kMaxNr> enter{};
  std::array<Range, kMaxNr> exit{};
  std::vector<const AgentEvent*> raw_enter;  // every call's
  std::vector<const AgentEvent*> raw_exit;
  bool summary = false;

  DPROBE_HIT_PATH std::span<const AgentEvent* const> enter_of(uint32_t nr) const {
    return nr < kMaxNr ? span_of(enter[nr]) : std::span<const AgentEvent* const>{};
  }
  DPROBE_HIT_PATH std::span<const AgentEvent* const> exit_of(uint32_t nr) const {
    return nr < kMaxNr ? span_of(exit[nr]) : std::span<const AgentEvent* const>{};
  }
  // Whether a call of `nr` has anything to record after it returns.
  DPROBE_HIT_PATH bool wants_exit(uint32_t nr) const {
    return summary || !raw_exit.empty() || !exit_of(nr).empty();
  }

 private:
  DPROBE_HIT_PATH std::span<const AgentEvent* const> span_of(Range range) const {
    return {events.data() + range.begin, static_cast<size_t>(range.end - range.begin)};
  }
};

extern std::atomic<const Filter*> g_filter;

// Selectors: one byte per thread, never freed. The kernel reads a thread's
// selector at each of its system calls for as long as the thread lives,
// so selectors live in a static array, not in thread-local storage (freed
// with the thread's stack, and out of reach of stop_syscall_tracing). A
// slot whose thread has exited is taken again.
inline constexpr uint32_t kMaxSelectors = 8192;
extern char g_selectors[kMaxSelectors];
// Slot + 1 of the calling thread; 0 before it has one.
extern __attribute__((tls_model("initial-exec"))) thread_local uint32_t t_selector;

DPROBE_HIT_PATH inline char* own_selector() {
  return t_selector != 0 ? &g_selectors[t_selector - 1] : nullptr;
}

// A system call as the tracing sees it.
struct Call {
  int64_t nr;
  uint64_t site;  // the address after the syscall instruction
  // The registers of the call: the handler's copy of a signal's context, or
  // a trampoline's frame itself (copying it would call memcpy, maybe probed).
  arch::SavedRegs* regs;
};

DPROBE_HIT_PATH inline long arg(const Call& call, int index) {
  return static_cast<long>(call.regs->slot[arch::kSyscallArgSlots[index]]);
}

bool is_exec(int64_t nr);
bool is_clone_family(int64_t nr);

// Whether this thread's calls are the session's to record now.
bool traced_here(const ThreadTrace& thread);
void record_enter(const Filter& filter, const Call& call, ThreadTrace& thread);
// Records the exit events, and the call in --summary's counts unless it is
// a new thread's return from its clone (the kernel's exit event fires in
// both threads; strace -c counts the call once, in the caller).
void record_exit(const Filter& filter, Call& call, int64_t result, uint64_t elapsed_ns,
                 ThreadTrace& thread, bool counted = true);
// A call the agent answered for the program without the kernel (its
// rt_sigaction for a signal the agent holds; its exit_group, made from the
// agent's text at exit), recorded and counted as the kernel and strace
// would have seen the program's own, when this thread's calls are traced.
// `call_site`: where the program made it; `returns`: false for exit_group.
void record_answered_call(int64_t nr, std::span<const uint64_t> args, int64_t result,
                          uint64_t call_site, bool returns) noexcept;
// The call in --summary's counts. Never for exit and exit_group: strace -c
// counts a call when it returns.
void count_call(const Filter& filter, int64_t nr, int64_t result, uint64_t elapsed_ns);

// rt_sigprocmask made for real (from a rewritten site), the held signals
// left out of what it blocks.
long block_real_mask(const Call& call);

// The program's own Syscall User Dispatch would take the thread's SIGSYS
// from the agent's: refused while the agent traces, and counted for the
// CLI to say so at the end.
bool is_own_dispatch_request(const Call& call);
long refuse_own_dispatch();

// The agent's descriptors (arch/runtime/agent_descriptors.h) through the
// program's raw close, close_range, dup2 and dup3, as the C library's
// interposers keep them: closing one is EBADF, taking its number moves it
// away first. Whether the call was one of those, made (its result in
// `result`).
bool keep_agent_descriptors(const Call& call, long* result);

}  // namespace dprobe::agent::dispatch

#endif  // DPROBE_AGENT_HIT_SYSCALL_HIT_H_
