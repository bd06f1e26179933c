// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit/syscall_hit.h"

#include <signal.h>
#include <sys/syscall.h>

#include <cerrno>

#include "agent/agent_state.h"
#include "agent/hit/descriptor_gate.h"
#include "agent/hit/vdso.h"
#include "agent/kernel_signal.h"
#include "arch/runtime/agent_descriptors.h"
#include "arch/runtime/raw_syscall.h"
#include "arch/runtime/safe_memory.h"

namespace dprobe::agent::dispatch {

std::atomic<const Filter*> g_filter{nullptr};
char g_selectors[kMaxSelectors];
__attribute__((tls_model("initial-exec"))) thread_local uint32_t t_selector;

DPROBE_HIT_PATH bool is_exec(int64_t nr) { return nr == SYS_execve || nr == SYS_execveat; }

DPROBE_HIT_PATH bool is_clone_family(int64_t nr) {
  return nr == SYS_clone || nr == SYS_clone3 || nr == kSysFork || nr == kSysVfork;
}

DPROBE_HIT_PATH bool traced_here(const ThreadTrace& thread) {
  return agent_state().recording.load(std::memory_order_relaxed) && !thread.is_agent &&
         !thread.in_agent && !thread.in_handler;
}

namespace {

DPROBE_HIT_PATH void record_all(std::span<const AgentEvent* const> events, const Call& call,
                                ThreadTrace& thread) {
  if (events.empty()) return;
  AgentState& state = agent_state();
  if (!state.memory) return;
  ensure_ring(thread, *state.memory);
  // The call site, as the ip field: the instruction that made the call.
  HitInfo hit{call.site - arch::kSyscallInsnBytes, current_cpu(), /*faultless=*/false};
  for (const AgentEvent* event : events) {
    record_entry_event(*event, hit, *call.regs, thread, *state.memory);
  }
}

}  // namespace

DPROBE_HIT_PATH void record_enter(const Filter& filter, const Call& call, ThreadTrace& thread) {
  thread.in_handler = true;
  record_all(filter.enter_of(static_cast<uint32_t>(call.nr)), call, thread);
  record_all(filter.raw_enter, call, thread);
  thread.in_handler = false;
}

DPROBE_HIT_PATH void record_exit(const Filter& filter, Call& call, int64_t result,
                                 uint64_t elapsed_ns, ThreadTrace& thread, bool counted) {
  call.regs->slot[arch::kSyscallResultSlot] = static_cast<uint64_t>(result);
  thread.in_handler = true;
  record_all(filter.exit_of(static_cast<uint32_t>(call.nr)), call, thread);
  record_all(filter.raw_exit, call, thread);
  thread.in_handler = false;
  if (counted) count_call(filter, call.nr, result, elapsed_ns);
}

void record_answered_call(int64_t nr, std::span<const uint64_t> args, int64_t result,
                          uint64_t call_site, bool returns) noexcept {
  const Filter* filter = g_filter.load(std::memory_order_acquire);
  ThreadTrace& thread = current_thread();
  if (filter == nullptr || own_selector() == nullptr || !traced_here(thread)) return;
  arch::SavedRegs regs{};
  regs.slot[arch::kSyscallOrigNrSlot] = static_cast<uint64_t>(nr);
  regs.slot[arch::kSyscallNrSlot] = static_cast<uint64_t>(nr);
  for (size_t i = 0; i < args.size() && i < std::size(arch::kSyscallArgSlots); ++i) {
    regs.slot[arch::kSyscallArgSlots[i]] = args[i];
  }
  Call call{nr, call_site + arch::kSyscallInsnBytes, &regs};
  record_enter(*filter, call, thread);
  if (returns) record_exit(*filter, call, result, 0, thread);
}

DPROBE_HIT_PATH void count_call(const Filter& filter, int64_t nr, int64_t result,
                                uint64_t elapsed_ns) {
  AgentState& state = agent_state();
  if (!filter.summary || !state.memory || nr < 0 || nr >= kMaxNr) return;
  trace::SyscallStats& stats = state.memory->syscall_stats(static_cast<uint32_t>(nr));
  stats.calls.fetch_add(1, std::memory_order_relaxed);
  if (arch::raw_failed(result)) stats.errors.fetch_add(1, std::memory_order_relaxed);
  stats.total_ns.fetch_add(elapsed_ns, std::memory_order_relaxed);
}

DPROBE_HIT_PATH long block_real_mask(const Call& call) {
  const long how = arg(call, 0);
  const auto set = static_cast<uint64_t>(arg(call, 1));
  if (arg(call, 3) != sizeof(SignalMask)) return -EINVAL;
  SignalMask asked = 0;
  if (set != 0 && !arch::safe_read(&asked, set, sizeof(asked))) return -EFAULT;
  const SignalMask kept = how == SIG_UNBLOCK ? asked : asked & ~kHeld;
  return arch::raw_syscall(SYS_rt_sigprocmask, how, set != 0 ? arch::raw_arg(&kept) : 0,
                           arg(call, 2), sizeof(SignalMask));
}

DPROBE_HIT_PATH bool is_own_dispatch_request(const Call& call) {
  return call.nr == SYS_prctl && arg(call, 0) == kPrSetSyscallUserDispatch;
}

DPROBE_HIT_PATH long refuse_own_dispatch() {
  AgentState& state = agent_state();
  if (state.memory) {
    __atomic_fetch_add(&state.memory->header().dispatch_refused, 1, __ATOMIC_RELAXED);
  }
  return -EBUSY;
}

DPROBE_HIT_PATH bool keep_agent_descriptors(const Call& call, long* result) {
  const arch::AgentDescriptorTable& ours = arch::AgentDescriptorTable::instance();
  switch (call.nr) {
    case SYS_close:
      if (ours.holding(static_cast<int>(arg(call, 0))) == nullptr) return false;
      *result = -EBADF;
      return true;
    case SYS_close_range: {
      const long flags = arg(call, 2);
      *result = ours.close_range_around(
          static_cast<unsigned>(arg(call, 0)), static_cast<unsigned>(arg(call, 1)),
          [flags](unsigned from, unsigned to) {
            return arch::raw_syscall(SYS_close_range, from, to, flags);
          });
      return true;
    }
#ifdef SYS_dup2
    case SYS_dup2:
#endif
    case SYS_dup3:
      if (arch::AgentDescriptor* held = ours.holding(static_cast<int>(arg(call, 1)))) {
        held->move_away();
      }
      return false;
    default:
      return false;
  }
}

namespace {

// A call through a rewritten site, between its enter and exit handlers.
struct CallInFlight {
  bool open;
  bool gated;  // holds the descriptor gate (descriptor_gate.h) until its exit
  bool traced;
  bool substituted;  // made by the enter handler: `result` is its result
  int64_t nr;
  int64_t result;
  uint64_t start_ns;
};
__attribute__((tls_model("initial-exec"))) thread_local CallInFlight t_call;

}  // namespace
}  // namespace dprobe::agent::dispatch

// Called by a rewritten system call site's trampoline just before its
// syscall, with the registers of the call. The call then runs from the
// site's gadget in the agent's text (or from the trampoline, with this
// thread's selector at "allow"); rt_sigreturn, the clone family and exec
// run from the trampoline with it at "block", so that their syscall comes
// to the dispatch, which knows how to make them. Which of the two is said
// in the frame's target slot (rcx: the syscall overwrites it).
extern "C" __attribute__((visibility("hidden"))) DPROBE_HIT_PATH void dprobe_syscall_enter(
    dprobe::arch::SavedRegs* regs, const dprobe::arch::SyscallLinks* links) noexcept {
  using namespace dprobe::agent;
  using namespace dprobe::agent::dispatch;
  regs->slot[dprobe::arch::kSyscallTargetSlot] = links->plain;
  const uint64_t syscall_address = links->site;
  const auto nr = static_cast<int64_t>(regs->slot[dprobe::arch::kSyscallNrSlot]);
  char* selector = own_selector();
  const bool dispatch_makes_it = nr == SYS_rt_sigreturn || is_clone_family(nr) || is_exec(nr);
  // Off on this thread: nothing to see.
  if (selector == nullptr) return;
  if (*selector != kSelectorBlock) {
    // Let through: a handler of the program interrupted a call made from a
    // site, whose exit is still to come. This call is made with no exit
    // call (from the second gadget, where there is one), so that exit
    // stays the outer call's.
    if (!dispatch_makes_it && links->returned != 0) {
      regs->slot[dprobe::arch::kSyscallTargetSlot] = links->returned;
    }
    return;
  }
  if (dispatch_makes_it) return;
  ThreadTrace& thread = current_thread();
  const Filter* filter = g_filter.load(std::memory_order_acquire);
  Call call;
  call.nr = nr;
  call.site = syscall_address + dprobe::arch::kSyscallInsnBytes;
  call.regs = regs;  // its orig_ax slot is the frame's own, never restored
  // The trampoline left orig_ax and the other fixed slots unwritten.
  dprobe::arch::fill_fixed_slots(*regs);
  regs->slot[dprobe::arch::kSyscallOrigNrSlot] = static_cast<uint64_t>(nr);
  const bool traced = filter != nullptr && traced_here(thread);
  if (traced) record_enter(*filter, call, thread);
  const bool timed = traced && filter->wants_exit(static_cast<uint32_t>(nr));
  // An exit that never came (a handler left by siglongjmp): its gate goes.
  if (t_call.open && t_call.gated) leave_program_open();
  t_call = {true, false, traced, false, nr, 0, timed ? monotonic_ns() : 0};
  long made = 0;
  if (nr == SYS_rt_sigprocmask) {
    made = block_real_mask(call);
    t_call.substituted = true;
  } else if (is_own_dispatch_request(call)) {
    made = refuse_own_dispatch();
    t_call.substituted = true;
  } else {
    t_call.substituted = keep_agent_descriptors(call, &made);
  }
  if (t_call.substituted) {
    t_call.result = made;
    regs->slot[dprobe::arch::kSyscallNrSlot] = SYS_getppid;  // the syscall, made harmless
  } else if (takes_descriptor(nr)) {
    enter_program_open();
    t_call.gated = true;
  }
  if (!timed && !t_call.substituted && !t_call.gated && links->returned != 0) {
    // Nothing for exit to do: the call is made from the site's second
    // gadget, which goes straight back. Inside the dispatch's range the
    // selector is not read: it stays at "block".
    t_call.open = false;
    regs->slot[dprobe::arch::kSyscallTargetSlot] = links->returned;
    return;
  }
  *selector = kSelectorAllow;
  regs->slot[dprobe::arch::kSyscallTargetSlot] = links->dispatched;
}

// Called by the trampoline just after the syscall, with its result in ax.
extern "C" __attribute__((visibility("hidden"))) DPROBE_HIT_PATH void dprobe_syscall_exit(
    dprobe::arch::SavedRegs* regs, const dprobe::arch::SyscallLinks* links) noexcept {
  using namespace dprobe::agent;
  using namespace dprobe::agent::dispatch;
  const uint64_t syscall_address = links->site;
  if (!t_call.open) return;  // made by the dispatch, or by a new thread's first return
  t_call.open = false;
  if (t_call.gated) leave_program_open();
  // Blocking again even once the session is over: the next call turns
  // the dispatch off on this thread (stop_syscall_tracing).
  if (char* selector = own_selector()) *selector = kSelectorBlock;
  if (t_call.substituted)
    regs->slot[dprobe::arch::kSyscallResultSlot] = static_cast<uint64_t>(t_call.result);
  const Filter* filter = g_filter.load(std::memory_order_acquire);
  if (!t_call.traced || filter == nullptr) return;
  Call call;
  call.nr = t_call.nr;
  call.site = syscall_address + dprobe::arch::kSyscallInsnBytes;
  call.regs = regs;
  dprobe::arch::fill_fixed_slots(*regs);
  regs->slot[dprobe::arch::kSyscallOrigNrSlot] = static_cast<uint64_t>(t_call.nr);
  const auto result = static_cast<int64_t>(regs->slot[dprobe::arch::kSyscallResultSlot]);
  const uint64_t elapsed = t_call.start_ns != 0 ? monotonic_ns() - t_call.start_ns : 0;
  record_exit(*filter, call, result, elapsed, current_thread());
}
