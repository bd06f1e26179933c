// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/syscall_dispatch.h"

#include <link.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "agent/agent_state.h"
#include "agent/hit/descriptor_gate.h"
#include "agent/hit/event_record.h"
#include "agent/hit/syscall_hit.h"
#include "agent/hit/thread_trace.h"
#include "agent/hit/vdso.h"
#include "agent/kernel_signal.h"
#include "agent/thread_census.h"
#include "arch/runtime/context.h"
#include "arch/runtime/platform.h"
#include "arch/runtime/raw_syscall.h"
#include "arch/runtime/safe_memory.h"

extern "C" char dprobe_dispatch_restorer[];
extern "C" char dprobe_clone_gadgets[];
extern "C" char dprobe_clone_gadgets_end[];
extern "C" char dprobe_site_gadgets[];
extern "C" char dprobe_site_gadgets_end[];

namespace dprobe::agent {

// What runs at each call (hit/syscall_hit.h), and what the control side
// shares with it.
using dispatch::arg;
using dispatch::Call;
using dispatch::Filter;
using dispatch::g_filter;
using dispatch::g_selectors;
using dispatch::is_clone_family;
using dispatch::is_exec;
using dispatch::is_own_dispatch_request;
using dispatch::kDispatchOff;
using dispatch::kDispatchOn;
using dispatch::keep_agent_descriptors;
using dispatch::kMaxNr;
using dispatch::kMaxSelectors;
using dispatch::kPrSetSyscallUserDispatch;
using dispatch::kSelectorAllow;
using dispatch::kSelectorBlock;
using dispatch::kSysFork;
using dispatch::kSysVfork;
using dispatch::record_enter;
using dispatch::record_exit;
using dispatch::refuse_own_dispatch;
using dispatch::t_selector;
using dispatch::traced_here;

namespace {

constexpr int kSysUserDispatch = 2;  // si_code of the dispatch's SIGSYS
constexpr int kSysSeccomp = 1;       // si_code of a seccomp filter's

// ---- The agent's text: the range the kernel lets through -------------------

struct TextRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};
TextRange g_text;

int find_own_text(dl_phdr_info* info, size_t, void* data) {
  auto* range = static_cast<TextRange*>(data);
  const auto own = reinterpret_cast<uint64_t>(&dprobe_dispatch_restorer);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD || (segment.p_flags & PF_X) == 0) continue;
    const uint64_t begin = info->dlpi_addr + segment.p_vaddr;
    const uint64_t end = begin + segment.p_memsz;
    if (own >= begin && own < end) {
      *range = {begin, end};
      return 1;
    }
  }
  return 0;
}

// ---- Selectors (syscall_hit.h): their owners ------------------------------

std::atomic<uint32_t> g_selector_owner[kMaxSelectors];  // tid; 0: free
std::atomic<bool> g_blocking{false};                    // what a new selector starts as

// When this thread's clone (or fork) went to its gadget.
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_clone_start_ns;

bool take_slot(uint32_t index, uint32_t owner, uint32_t tid, uint32_t pid) {
  if (owner != 0 && arch::raw_thread_alive(pid, owner)) return false;
  return g_selector_owner[index].compare_exchange_strong(owner, tid);
}

int32_t claim_selector(uint32_t tid) {
  const uint32_t pid = arch::own_pid();
  for (uint32_t pass = 0; pass < 2; ++pass) {
    for (uint32_t i = 0; i < kMaxSelectors; ++i) {
      const uint32_t owner = g_selector_owner[i].load(std::memory_order_relaxed);
      if ((owner == 0 || pass == 1) && take_slot(i, owner, tid, pid))
        return static_cast<int32_t>(i);
    }
  }
  return -1;
}

// ---- Sites to rewrite -----------------------------------------------------

// Every syscall instruction that brought a SIGSYS, once: a fixed set
// (open addressing) and a queue the controller's thread drains. Full: the
// site stays on the dispatch, correct and slower.
constexpr size_t kSeenSites = 4096;
constexpr size_t kQueuedSites = 256;
std::array<std::atomic<uint64_t>, kSeenSites> g_seen_sites{};
std::array<std::atomic<uint64_t>, kQueuedSites> g_queued_sites{};
std::atomic<bool> g_rewrite{false};
std::atomic<bool> g_borrowed{false};  // dprobe attach has a thread of ours, until it says

bool first_sight(uint64_t site) {
  size_t at = (site * 0x9e3779b97f4a7c15ull) >> 52;  // 12 bits: kSeenSites
  for (size_t probe = 0; probe < 32; ++probe, at = (at + 1) % kSeenSites) {
    uint64_t seen = g_seen_sites[at].load(std::memory_order_relaxed);
    if (seen == site) return false;
    if (seen == 0 && g_seen_sites[at].compare_exchange_strong(seen, site)) return true;
    if (seen == site) return false;
  }
  return false;
}

constexpr uint32_t kWakeTag = 0x6473776b;  // "dswk": a site waits to be rewritten
std::atomic<uint32_t> g_rewriter{0};       // the thread that rewrites sites

// Wakes the rewriting thread from its wait (a tagged SIGSEGV, as the
// census's questions): a site called in a loop is rewritten at once, not
// after the thousands of SIGSYS of the next 50 ms.
void wake_rewriter() {
  const uint32_t tid = g_rewriter.load(std::memory_order_relaxed);
  if (tid != 0) send_tagged_signal(tid, kWakeTag);
}

void queue_site(uint64_t site) {
  if (!g_blocking.load(std::memory_order_relaxed) || !g_rewrite.load(std::memory_order_relaxed) ||
      !first_sight(site)) {
    return;
  }
  for (std::atomic<uint64_t>& slot : g_queued_sites) {
    uint64_t empty = 0;
    if (slot.compare_exchange_strong(empty, site)) return wake_rewriter();
  }
}

// ---- Asking the other threads -----------------------------------------------

constexpr uint32_t kEnableTag = 0x64737564;  // "dsud"
std::atomic<uint32_t> g_answers{0};

// The session is over: this thread's calls go straight to the kernel again,
// and its selector is free for another thread.
void turn_dispatch_off_here() {
  arch::raw_syscall(SYS_prctl, kPrSetSyscallUserDispatch, kDispatchOff, 0, 0, 0);
  if (t_selector != 0) g_selector_owner[t_selector - 1].store(0);
  t_selector = 0;
}

// ---- Clone gadgets ------------------------------------------------------

constexpr uint64_t kGadgetStride = arch::kCloneGadgetStride;
constexpr uint64_t kGadgetTrapOffset = arch::kCloneGadgetTrapOffset;

// A gadget serves one call site, one system call, and one kind of child:
// a thread of this process or not. The child knows which by its gadget:
// nothing it could ask then (its process id, the clone flags in the
// parent's memory) is sure to answer truly.
struct Gadget {
  std::atomic<uint64_t> back{0};  // the address after the call site's syscall
  std::atomic<int64_t> key{-1};   // nr * 2, + 1 for a thread
};

int64_t gadget_key(int64_t nr, bool thread) { return nr * 2 + (thread ? 1 : 0); }
std::array<Gadget, 64> g_gadgets;

uint64_t gadget_address(size_t index) {
  return reinterpret_cast<uint64_t>(dprobe_clone_gadgets) + index * kGadgetStride;
}

// The gadget of a call site and key, taken on its first call: -1 when
// every gadget is taken.
int gadget_for(uint64_t back, int64_t key) {
  for (size_t i = 0; i < g_gadgets.size(); ++i) {
    Gadget& gadget = g_gadgets[i];
    uint64_t seen = gadget.back.load(std::memory_order_acquire);
    if (seen == 0 && gadget.back.compare_exchange_strong(seen, back)) {
      gadget.key.store(key, std::memory_order_release);
      return static_cast<int>(i);
    }
    if (seen == back) {
      // Its key is stored right after its address: wait for it.
      int64_t owner_key;
      while ((owner_key = gadget.key.load(std::memory_order_acquire)) == -1) {
      }
      if (owner_key == key) return static_cast<int>(i);
    }
  }
  return -1;
}

Call call_of(const siginfo_t& info, const ucontext_t& context, arch::SavedRegs& regs) {
  Call call;
  arch::load_regs(context, regs);
  call.regs = &regs;
  call.nr = info.si_syscall;
  call.site = reinterpret_cast<uint64_t>(info.si_call_addr);
  regs.slot[arch::kSyscallOrigNrSlot] = static_cast<uint64_t>(call.nr);
  regs.slot[arch::kSyscallNrSlot] = static_cast<uint64_t>(call.nr);
  return call;
}

// ---- Calls made elsewhere than in the handler -----------------------------

// rt_sigprocmask on the mask the handler's return restores. The held
// signals stay deliverable (kernel_signal.h), whatever is asked.
long set_context_mask(const Call& call, ucontext_t& context) {
  const long how = arg(call, 0);
  const auto set = static_cast<uint64_t>(arg(call, 1));
  const auto old = static_cast<uint64_t>(arg(call, 2));
  if (arg(call, 3) != sizeof(SignalMask)) return -EINVAL;
  const SignalMask current = to_kernel_mask(context.uc_sigmask);
  SignalMask asked = 0;
  if (set != 0 && !arch::safe_read(&asked, set, sizeof(asked))) return -EFAULT;
  if (set != 0 && how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK) return -EINVAL;
  if (old != 0 && !arch::safe_write(old, &current, sizeof(current))) return -EFAULT;
  if (set == 0) return 0;
  SignalMask next = asked;
  if (how == SIG_BLOCK) next = current | asked;
  if (how == SIG_UNBLOCK) next = current & ~asked;
  set_kernel_mask(context.uc_sigmask, next & ~kHeld & ~kUnblockable);
  return 0;
}

// sigaltstack on the signal stack the handler's return installs: the
// kernel's rt_sigreturn sets the thread's signal stack from the frame, so
// one set inside this handler would be undone (a thread's overflow
// handler would then never run). The frame's flags say whether the
// program was on its signal stack when it called, as the kernel's answer
// would. Checks as the kernel's do_sigaltstack.
long set_context_altstack(const Call& call, ucontext_t& context) {
  constexpr int kAutoDisarm = static_cast<int>(1U << 31);  // SS_AUTODISARM (linux/signal.h)
  const auto asked = static_cast<uint64_t>(arg(call, 0));
  const auto old = static_cast<uint64_t>(arg(call, 1));
  const stack_t current = context.uc_stack;
  stack_t wanted{};
  if (asked != 0 && !arch::safe_read(&wanted, asked, sizeof(wanted))) return -EFAULT;
  if (old != 0 && !arch::safe_write(old, &current, sizeof(current))) return -EFAULT;
  if (asked == 0) return 0;
  if ((current.ss_flags & SS_ONSTACK) != 0) return -EPERM;
  const int mode = wanted.ss_flags & ~kAutoDisarm;
  if (mode != 0 && mode != SS_ONSTACK && mode != SS_DISABLE) return -EINVAL;
  if (mode == SS_DISABLE) {
    context.uc_stack = stack_t{nullptr, SS_DISABLE, 0};
    return 0;
  }
  if (wanted.ss_size < arch::kMinSignalStackBytes) return -ENOMEM;
  context.uc_stack = stack_t{wanted.ss_sp, wanted.ss_flags & kAutoDisarm, wanted.ss_size};
  return 0;
}

// The child's clone flags, read in the child (memory is shared, or copied).
uint64_t clone_flags(int64_t nr, const arch::SavedRegs& regs) {
  if (nr == SYS_clone) return regs.slot[arch::kSyscallArgSlots[0]];
  if (nr == kSysVfork) return CLONE_VM | CLONE_VFORK;
  if (nr == SYS_clone3) {
    uint64_t flags = 0;  // clone_args.flags is the first field
    arch::safe_read(&flags, regs.slot[arch::kSyscallArgSlots[0]], sizeof(flags));
    return flags;
  }
  return 0;
}

// The program's call being made for it by the dispatch on this thread:
// a seccomp filter of the program's that traps it (SIGSYS, SYS_SECCOMP,
// from the agent's text) is the program's to handle, in this context.
struct MadeForProgram {
  ucontext_t* context;  // the program's, as the dispatch's SIGSYS found it
  uint64_t site;        // the address after its syscall instruction
  bool answered;        // the program's handler ran: its context has the result
};
__attribute__((tls_model("initial-exec"))) thread_local MadeForProgram* t_made_for_program;

long make_call(const Call& call) {
  return arch::raw_syscall(call.nr, arg(call, 0), arg(call, 1), arg(call, 2), arg(call, 3),
                           arg(call, 4), arg(call, 5));
}

// make_call, with a trap of the program's own filter handed to the program.
long make_call_for(const Call& call, ucontext_t& context) {
  MadeForProgram made{&context, call.site, false};
  t_made_for_program = &made;
  const long result = make_call(call);
  t_made_for_program = nullptr;
  if (!made.answered) return result;
  arch::SavedRegs regs;
  arch::load_regs(context, regs);
  return static_cast<long>(regs.slot[arch::kSyscallResultSlot]);
}

void set_result(ucontext_t& context, long result) {
  arch::SavedRegs regs;
  arch::load_regs(context, regs);
  regs.slot[arch::kSyscallResultSlot] = static_cast<uint64_t>(result);
  arch::store_regs(regs, context);
}

}  // namespace

int syscall_dispatch_unavailable() noexcept {
  // Turning it off is harmless and tells whether the kernel knows it.
  const long result =
      arch::raw_syscall(SYS_prctl, kPrSetSyscallUserDispatch, kDispatchOff, 0, 0, 0);
  return arch::raw_failed(result) ? static_cast<int>(-result) : 0;
}

void configure_syscall_tracing(std::span<const AgentEvent* const> events, bool summary,
                               bool rewrite_sites) {
  g_rewrite.store(rewrite_sites);
  if (g_text.begin == 0) dl_iterate_phdr(find_own_text, &g_text);
  auto* filter = new Filter;
  filter->summary = summary;
  for (uint32_t nr = 0; nr < kMaxNr; ++nr) {
    for (const bool exit : {false, true}) {
      Filter::Range& range = exit ? filter->exit[nr] : filter->enter[nr];
      range.begin = static_cast<uint16_t>(filter->events.size());
      for (const AgentEvent* event : events) {
        const trace::EventDesc& desc = event->desc;
        const bool per_call = desc.source == trace::EventSource::kSyscallEnter ||
                              desc.source == trace::EventSource::kSyscallExit;
        if (per_call && desc.syscall_nr == static_cast<int32_t>(nr) &&
            trace::is_syscall_exit(desc.source) == exit) {
          filter->events.push_back(event);
        }
      }
      range.end = static_cast<uint16_t>(filter->events.size());
    }
  }
  for (const AgentEvent* event : events) {
    if (event->desc.source == trace::EventSource::kRawSyscallEnter)
      filter->raw_enter.push_back(event);
    if (event->desc.source == trace::EventSource::kRawSyscallExit)
      filter->raw_exit.push_back(event);
  }
  g_blocking.store(true);
  g_filter.store(filter, std::memory_order_release);
}

bool syscall_tracing_configured() noexcept {
  return g_filter.load(std::memory_order_acquire) != nullptr && g_blocking.load();
}

bool enable_dispatch_on_this_thread() noexcept {
  if (!syscall_tracing_configured() || g_text.begin == 0) return false;
  const uint32_t tid = arch::raw_gettid();
  if (t_selector == 0) {
    const int32_t slot = claim_selector(tid);
    if (slot < 0) return false;
    t_selector = static_cast<uint32_t>(slot) + 1;
  } else {
    g_selector_owner[t_selector - 1].store(tid);
  }
  char* selector = &g_selectors[t_selector - 1];
  *selector = g_blocking.load() ? kSelectorBlock : kSelectorAllow;
  const long result = arch::raw_syscall(
      SYS_prctl, kPrSetSyscallUserDispatch, kDispatchOn, static_cast<long>(g_text.begin),
      static_cast<long>(g_text.end - g_text.begin), arch::raw_arg(selector));
  return !arch::raw_failed(result);
}

void enable_dispatch_on_every_thread() noexcept {
  const std::vector<uint32_t> others = other_threads().value_or(std::vector<uint32_t>{});
  g_answers.store(0);
  uint32_t sent = 0;
  for (const uint32_t tid : others) sent += send_tagged_signal(tid, kEnableTag) ? 1u : 0u;
  if (!current_thread().is_agent) enable_dispatch_on_this_thread();
  const timespec pause{0, 1000000};  // 1 ms, a thousand times at most
  for (int wait = 0; wait < 1000 && g_answers.load() < sent; ++wait) {
    arch::raw_syscall(SYS_nanosleep, arch::raw_arg(&pause), 0);
  }
}

bool answer_dispatch_request(int sig, const siginfo_t& info) noexcept {
  const uint32_t tag = tag_of(sig, info);
  if (tag == kWakeTag) return true;  // the wait is over: that was all
  if (tag != kEnableTag) return false;
  if (!current_thread().is_agent) enable_dispatch_on_this_thread();
  g_answers.fetch_add(1);
  return true;
}

void dispatch_after_fork(bool traced) noexcept {
  if (!traced || !syscall_tracing_configured()) {
    t_selector = 0;  // the parent's slot is the parent's
    return;
  }
  enable_dispatch_on_this_thread();
}

// The selectors stay at "block": each thread's next call comes to the
// dispatch once more, which turns it off on that thread (a thread whose
// dispatch is on pays the kernel's check on every call, selector or not).
void stop_syscall_tracing() noexcept { g_blocking.store(false); }

void* dispatch_restorer() noexcept { return dprobe_dispatch_restorer; }

bool dispatch_syscall(const siginfo_t& info, ucontext_t& context) {
  if (info.si_code != kSysUserDispatch) return false;
  if (!g_blocking.load(std::memory_order_relaxed)) turn_dispatch_off_here();
  arch::SavedRegs regs;
  Call call = call_of(info, context, regs);
  ThreadTrace& thread = current_thread();
  const Filter* filter = g_filter.load(std::memory_order_acquire);
  const bool traced = filter != nullptr && traced_here(thread);
  if (traced) record_enter(*filter, call, thread);
  // exit and exit_group never return to be counted: strace -c counts a
  // call when it returns, and has neither in its table.
  queue_site(call.site - arch::kSyscallInsnBytes);
  if (call.nr == SYS_rt_sigreturn) {
    // The frame it returns from is at the interrupted stack pointer: the
    // same call, made from the agent's text, with that stack.
    arch::set_context_pc(context, reinterpret_cast<uint64_t>(dprobe_dispatch_restorer));
    return true;
  }
  if (is_clone_family(call.nr)) {
    const bool makes_thread = (clone_flags(call.nr, *call.regs) & CLONE_THREAD) != 0;
    const int gadget = gadget_for(call.site, gadget_key(call.nr, makes_thread));
    if (gadget >= 0) {
      t_clone_start_ns = monotonic_ns();
      arch::set_context_pc(context, gadget_address(static_cast<size_t>(gadget)));
      return true;
    }
    if (call.nr != kSysFork && (clone_flags(call.nr, *call.regs) & CLONE_VM) != 0) {
      set_result(context, -EAGAIN);  // no gadget left: refused, never run astray
      return true;
    }
    // A fork-like call copies the handler's frame with the rest: made here.
  }
  const bool timed = traced && filter->wants_exit(static_cast<uint32_t>(call.nr));
  const uint64_t start = timed ? monotonic_ns() : 0;
  long result = 0;
  if (call.nr == SYS_rt_sigprocmask) {
    result = set_context_mask(call, context);
  } else if (call.nr == SYS_sigaltstack) {
    result = set_context_altstack(call, context);
  } else if (is_own_dispatch_request(call)) {
    result = refuse_own_dispatch();
  } else if (is_exec(call.nr)) {
    hold_questions_for_exec();
    result = make_call_for(call, context);  // returns only when it failed
    release_questions();
  } else if (!keep_agent_descriptors(call, &result)) {
    const bool gated = takes_descriptor(call.nr);
    if (gated) enter_program_open();
    result = make_call_for(call, context);
    if (gated) leave_program_open();
  }
  const uint64_t elapsed = timed ? monotonic_ns() - start : 0;
  set_result(context, result);
  // A child forked here is another process: not this session's to record.
  const bool forked_child = is_clone_family(call.nr) && result == 0;
  if (timed && !forked_child) record_exit(*filter, call, result, elapsed, thread);
  return true;
}

bool clone_gadget_returned(ucontext_t& context) noexcept {
  const uint64_t pc = arch::context_pc(context);
  const auto begin = reinterpret_cast<uint64_t>(dprobe_clone_gadgets);
  const auto end = reinterpret_cast<uint64_t>(dprobe_clone_gadgets_end);
  if (pc < begin + kGadgetTrapOffset || pc > end) return false;
  const uint64_t index = (pc - kGadgetTrapOffset - begin) / kGadgetStride;
  if (begin + index * kGadgetStride + kGadgetTrapOffset != pc || index >= g_gadgets.size()) {
    return false;
  }
  const Gadget& gadget = g_gadgets[index];
  arch::SavedRegs regs;
  arch::load_regs(context, regs);
  Call call;
  call.regs = &regs;
  const int64_t key = gadget.key.load(std::memory_order_acquire);
  call.nr = key >> 1;
  call.site = gadget.back.load(std::memory_order_acquire);
  const auto result = static_cast<int64_t>(regs.slot[arch::kSyscallResultSlot]);
  arch::set_context_pc(context, call.site);
  if (result == 0) {
    // The child. A thread of this process traces on (its dispatch is off
    // until it turns it on); another process is the fork handlers' to
    // decide, and a vfork child shares its parent's TLS: left alone.
    if ((key & 1) == 0) return true;
    t_selector = 0;  // the parent's slot, if the thread shares its TLS
    t_clone_start_ns = 0;
    enable_dispatch_on_this_thread();
  }
  ThreadTrace& thread = current_thread();
  const Filter* filter = g_filter.load(std::memory_order_acquire);
  if (filter == nullptr || !traced_here(thread)) return true;
  regs.slot[arch::kSyscallOrigNrSlot] = static_cast<uint64_t>(call.nr);
  const uint64_t elapsed = t_clone_start_ns != 0 ? monotonic_ns() - t_clone_start_ns : 0;
  record_exit(*filter, call, result, elapsed, thread, /*counted=*/result != 0);
  return true;
}

void set_site_rewriter() noexcept { g_rewriter.store(arch::raw_gettid()); }

void hold_site_rewrites_while_borrowed() noexcept { g_borrowed.store(true); }

void release_site_rewrites() noexcept { g_borrowed.store(false); }

bool site_rewrites_held() noexcept { return g_borrowed.load(); }

std::vector<uint64_t> take_queued_sites() {
  std::vector<uint64_t> sites;
  for (std::atomic<uint64_t>& slot : g_queued_sites) {
    if (const uint64_t site = slot.exchange(0); site != 0) sites.push_back(site);
  }
  return sites;
}

}  // namespace dprobe::agent

namespace dprobe::agent {
namespace {

// A call made from a site's gadgets is the program's, from that site: for
// a pc just after a gadget's syscall, the first gadget's way back into the
// site's trampoline; any other pc as it is.
uint64_t trampoline_pc_of(uint64_t pc) noexcept {
  if constexpr (arch::kSyscallGadgetBytes == 0) {
    return pc;
  } else {
    const auto begin = reinterpret_cast<uint64_t>(dprobe_site_gadgets);
    const auto end = reinterpret_cast<uint64_t>(dprobe_site_gadgets_end);
    if (pc <= begin || pc > end) return pc;
    const uint64_t gadgets =
        begin + (pc - begin - 1) / arch::kSyscallGadgetBytes * arch::kSyscallGadgetBytes;
    uint64_t back = 0;
    __builtin_memcpy(&back, reinterpret_cast<const void*>(gadgets + arch::kSyscallGadgetWayBack),
                     sizeof(back));
    return back;
  }
}

}  // namespace

ucontext_t* seccomp_trap_context(siginfo_t& info, const ucontext_t& context) noexcept {
  if (info.si_code != kSysSeccomp) return nullptr;
  const uint64_t pc = trampoline_pc_of(arch::context_pc(context));
  if (pc < g_text.begin || pc >= g_text.end) {
    // The program's own call: from a rewritten site's trampoline, its
    // handler is told the site (the context stays, to come back here).
    AgentState& state = agent_state();
    if (state.registry) {
      const core::ProbeRegistry::Reader reader(*state.registry);
      if (const core::Probe* site = reader.find_syscall_site_by_trampoline(pc)) {
        info.si_call_addr = reinterpret_cast<void*>(site->syscall_at + arch::kSyscallInsnBytes);
      }
    }
    return nullptr;
  }
  MadeForProgram* made = t_made_for_program;
  if (made == nullptr) {
    // The agent's own call, refused by the program's filter: it fails, and
    // the program, which never made it, hears nothing of it.
    set_result(const_cast<ucontext_t&>(context), -ENOSYS);
    return const_cast<ucontext_t*>(&context);
  }
  made->answered = true;
  info.si_call_addr = reinterpret_cast<void*>(made->site);
  return made->context;
}

}  // namespace dprobe::agent
