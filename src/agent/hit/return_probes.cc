// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit/return_probes.h"

#include <dlfcn.h>
#include <signal.h>

#include <optional>

#include "agent/hit/event_record.h"
#include "agent/hit/hit_analysis.h"
#include "agent/hit/stack_trace.h"
#include "agent/hit/vdso.h"
#include "arch/runtime/raw_syscall.h"
#include "arch/runtime/return_stubs.h"
#include "arch/runtime/safe_memory.h"
#include "base/hit_path.h"
#include "trace/hit/fetch_exec.h"
#include "trace/record.h"

// Read by dprobe_return_common (return_trampoline_x86_64.S): whether to
// pass xmm0 to dprobe_return_hit.
extern "C" {
__attribute__((visibility("hidden"))) uint8_t dprobe_read_float_return = 0;
}

namespace dprobe::agent {
namespace {

using core::ReturnInstance;

// Instances the whole process can have at once.
constexpr uint32_t kInstances = 32768;
// A thread this deep in return-probed calls is not traced deeper; it is
// the highest MAXACTIVE that means anything (the kernel's limit too).
constexpr uint32_t kMaxLivePerThread = core::kMaxActiveLimit;
// MAXACTIVE when the definition gives none: per thread, per event.
constexpr uint32_t kDefaultMaxActive = 64;

struct ReturnMachinery {
  core::ReturnInstancePool pool{kInstances};
  std::optional<arch::ReturnStubs> stubs;
};

ReturnMachinery* g_machinery = nullptr;
// Held by a sweep of exited threads' instances; a fork may copy it held by
// the agent's thread, which the child does not have.
std::atomic_flag g_sweeping;

// The program's unwinder (libgcc_s), which glibc's backtrace() and C++
// exceptions use, learns the stubs' unwind information.
DPROBE_HIT_PATH bool register_frames(const std::vector<uint8_t>& eh_frame) {
  void* libgcc = ::dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (libgcc == nullptr) return false;
  using RegisterFrame = void (*)(const void*);
  auto reg = reinterpret_cast<RegisterFrame>(::dlsym(libgcc, "__register_frame"));
  if (reg == nullptr) return false;
  reg(eh_frame.data());
  return true;
}

DPROBE_HIT_PATH void count_misses(const core::Probe& probe, uint64_t mask,
                                  AgentState& state) noexcept {
  for (size_t k = 0; k < probe.handlers.size() && k < 64; ++k) {
    if ((mask >> k) & 1) {
      state.memory->counter(probe.handlers[k]).misses.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

DPROBE_HIT_PATH void count_misses(const ReturnInstance& instance, AgentState& state) noexcept {
  const core::ProbeRegistry::Reader reader(*state.registry);
  if (const core::Probe* probe = reader.find_by_id(instance.probe_id)) {
    count_misses(*probe, instance.handlers, state);
  }
}

DPROBE_HIT_PATH void free_instance(uint32_t index, ReturnMachinery& m) noexcept {
  m.pool.at(index).state.store(core::kInstanceFree, std::memory_order_release);
  m.pool.release(index);
}

// A thread keeps a few instances it freed for its next calls: the pool's
// free list is one atomic for the whole process, and a return-probed call
// must not write a cache line that every thread writes. A spare is marked
// with its thread's id, so that a sweep gives back those of exited threads.
DPROBE_HIT_PATH std::optional<uint32_t> take_instance(ThreadTrace& thread,
                                                      ReturnMachinery& m) noexcept {
  if (thread.spare_count != 0) return thread.spare[--thread.spare_count];
  return m.pool.acquire();
}

DPROBE_HIT_PATH void give_back(uint32_t index, ThreadTrace& thread, ReturnMachinery& m) noexcept {
  if (thread.tid == 0 || thread.spare_count == std::size(thread.spare)) {
    free_instance(index, m);
    return;
  }
  ReturnInstance& instance = m.pool.at(index);
  instance.tid = thread.tid;
  instance.state.store(core::kInstanceSpare, std::memory_order_release);
  thread.spare[thread.spare_count++] = index;
}

DPROBE_HIT_PATH bool still_in_its_slot(uint32_t index, ReturnMachinery& m) noexcept {
  return arch::frame_returns_to(m.pool.at(index).stack_slot, m.stubs->address(index));
}

// The newest live instance leaves the thread's stack: a zombie until its
// slot shows the frame is gone; counted as a miss (its return will not be
// traced).
DPROBE_HIT_PATH void drop_top(ThreadTrace& thread, ReturnMachinery& m, AgentState& state) noexcept {
  const uint32_t index = thread.return_top - 1;
  ReturnInstance& instance = m.pool.at(index);
  thread.return_top = instance.prev;
  --thread.return_depth;
  uint32_t live = core::kInstanceLive;
  if (instance.state.compare_exchange_strong(live, core::kInstanceZombie)) {
    count_misses(instance, state);
    instance.prev = thread.zombie_top;
    thread.zombie_top = index + 1;
  } else {
    give_back(index, thread, m);  // it returned on another thread meanwhile
  }
}

// Frees the zombies whose frames are gone for sure, and those that
// returned on another thread.
DPROBE_HIT_PATH void sweep_zombies(ThreadTrace& thread, ReturnMachinery& m) noexcept {
  uint32_t* link = &thread.zombie_top;
  while (*link != 0) {
    const uint32_t index = *link - 1;
    ReturnInstance& instance = m.pool.at(index);
    const bool returned = instance.state.load(std::memory_order_acquire) == core::kInstanceReturned;
    if (returned || !still_in_its_slot(index, m)) {
      *link = instance.prev;
      give_back(index, thread, m);
    } else {
      link = &instance.prev;
    }
  }
}

// At an entry: instances of the same stack whose frames are below the new
// one belong to frames that are gone (the kernel's rule); one at the very
// frame is gone unless the new call returns to its stub (a tail call
// reuses its caller's frame and return address). A signal handler on its
// own stack is told apart by the signal stack's range; a coroutine's stack
// is not, which is why drops are zombies.
DPROBE_HIT_PATH void drop_stale(uint64_t new_slot, uint64_t new_return, bool on_altstack,
                                ThreadTrace& thread, ReturnMachinery& m,
                                AgentState& state) noexcept {
  while (thread.return_top != 0) {
    const uint32_t index = thread.return_top - 1;
    const ReturnInstance& instance = m.pool.at(index);
    const bool returned = instance.state.load(std::memory_order_acquire) == core::kInstanceReturned;
    const bool below = instance.stack_slot < new_slot ||
                       (instance.stack_slot == new_slot && new_return != m.stubs->address(index));
    const bool gone = instance.on_altstack == on_altstack && below;
    if (!returned && !gone) return;
    drop_top(thread, m, state);
  }
}

DPROBE_HIT_PATH uint32_t live_instances_of(const core::Probe& probe, size_t handler,
                                           const ThreadTrace& thread, ReturnMachinery& m,
                                           uint32_t enough) noexcept {
  uint32_t count = 0;
  for (uint32_t top = thread.return_top; top != 0 && count < enough;) {
    const ReturnInstance& instance = m.pool.at(top - 1);
    if (instance.probe_id == probe.id && ((instance.handlers >> handler) & 1)) ++count;
    top = instance.prev;
  }
  return count;
}

// The return events that may take an instance now: by their place among
// the probe's handlers, in 64 bits (a return event placed past those is a
// miss on every hit), and the first few by id; the arguments their entry
// keeps.
struct Admitted {
  uint64_t handlers = 0;
  uint16_t named[ReturnInstance::kNamedEvents];
  uint32_t count = 0;
  uint32_t entry_args = 0;
};

// The return events that may take an instance now; a miss for the others.
DPROBE_HIT_PATH Admitted admitted_handlers(const core::Probe& probe, ThreadTrace& thread,
                                           ReturnMachinery& m, AgentState& state) noexcept {
  Admitted admitted;
  for (size_t k = 0; k < probe.handlers.size(); ++k) {
    const AgentEvent* event = state.events.find(probe.handlers[k]);
    if (event == nullptr || !event->desc.is_return) continue;
    trace::EventCounter& counter = state.memory->counter(probe.handlers[k]);
    if (counter.disabled.load(std::memory_order_relaxed) != 0) continue;
    count_hit(thread, counter, probe.handlers[k]);
    const uint32_t limit = event->maxactive != 0 ? event->maxactive : kDefaultMaxActive;
    if (k >= 64 || thread.return_depth >= kMaxLivePerThread ||
        live_instances_of(probe, k, thread, m, limit) >= limit) {
      counter.misses.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    admitted.handlers |= uint64_t{1} << k;
    if (admitted.count < ReturnInstance::kNamedEvents)
      admitted.named[admitted.count] = event->desc.id;
    ++admitted.count;
    admitted.entry_args = std::max(admitted.entry_args, event->entry_args);
  }
  admitted.entry_args = std::min(admitted.entry_args, core::kMaxEntryArgs);
  return admitted;
}

DPROBE_HIT_PATH void fetch_entry_args(ReturnInstance& instance, uint32_t count,
                                      const arch::SavedRegs& regs) noexcept {
  const uint64_t sp = regs.slot[arch::kSpSlot];
  for (uint32_t n = 1; n <= count; ++n) {
    const arch::ArgLocation where = arch::argument_location(arch::host_isa(), n);
    uint64_t value = 0;
    if (where.in_register) {
      value = regs.slot[where.index];
    } else if (!arch::safe_read(&value, sp + 8ull * where.index, 8)) {
      value = 0;
    }
    instance.entry_args[n - 1] = value;
  }
}

DPROBE_HIT_PATH void record_return(const AgentEvent& event, const ReturnInstance& instance,
                                   const arch::SavedRegs& regs, bool faultless, ThreadTrace& thread,
                                   AgentState& state) noexcept {
  auto* record = reserve_record(event, thread, *state.memory);
  if (record == nullptr) return;
  const uint64_t now = record_time();
  const trace::RecordHeader header{event.desc.id, 0, current_cpu(), thread.pid, thread.tid, now};
  __builtin_memcpy(record, &header, sizeof(header));
  trace::store_field<uint64_t>(record, trace::EventDesc::kFuncOffset, instance.function);
  trace::store_field<uint64_t>(record, trace::EventDesc::kRetIpOffset, instance.caller);
  if (event.desc.entry_time_offset != 0) {
    trace::store_field<uint64_t>(record, event.desc.entry_time_offset, instance.entry_time);
  }
  // A session that asks for $duration stamps CLOCK_MONOTONIC (the CLI
  // sees to it), so the difference is nanoseconds.
  const uint64_t duration = now - instance.entry_time;
  uint32_t size = store_event_fields(event, regs.slot, instance.entry_args, thread, faultless,
                                     duration, record);
  if (event.desc.analysis && size != 0 &&
      !analyze_hit(event, {record, size, regs, duration, memory_reader(faultless)}, thread,
                   *state.memory)) {
    return;  // filtered out, or aggregated instead of recorded
  }
  thread.writer().commit(size);
}

DPROBE_HIT_PATH void run_return_events(const ReturnInstance& instance, arch::SavedRegs& regs,
                                       ThreadTrace& thread, AgentState& state) noexcept {
  // The probe may be gone (its library unloaded); then so are its events.
  const core::ProbeRegistry::Reader reader(*state.registry);
  const core::Probe* probe = reader.find_by_id(instance.probe_id);
  if (probe == nullptr) return;
  ensure_ring(thread, *state.memory);
  arch::complete_return_regs(regs, instance.stack_slot, instance.caller);
  fill_fixed_slots_if_read(state, regs);
  // The events named in the instance: found without the probe's handler
  // list, a chain of loads that the probe's lookup needs not finish first.
  for (uint32_t i = 0; i < instance.named_count; ++i) {
    if (const AgentEvent* event = state.events.find(instance.named_events[i])) {
      record_return(*event, instance, regs, instance.faultless_reads, thread, state);
    }
  }
  if (instance.named_count != 0) return;
  for (size_t k = 0; k < probe->handlers.size() && k < 64; ++k) {
    const AgentEvent* event = state.events.find(probe->handlers[k]);
    if (((instance.handlers >> k) & 1) && event != nullptr) {
      record_return(*event, instance, regs, instance.faultless_reads, thread, state);
    }
  }
}

DPROBE_HIT_PATH bool in_live_stack(uint32_t index, const ThreadTrace& thread,
                                   ReturnMachinery& m) noexcept {
  for (uint32_t top = thread.return_top; top != 0; top = m.pool.at(top - 1).prev) {
    if (top == index + 1) return true;
  }
  return false;
}

DPROBE_HIT_PATH bool unlink_zombie(uint32_t index, ThreadTrace& thread,
                                   ReturnMachinery& m) noexcept {
  for (uint32_t* link = &thread.zombie_top; *link != 0; link = &m.pool.at(*link - 1).prev) {
    if (*link == index + 1) {
      *link = m.pool.at(index).prev;
      return true;
    }
  }
  return false;
}

// The thread's signal stack, as the agent last learnt it (an optimized hit
// has no signal context that tells it).
DPROBE_HIT_PATH StackInfo current_signal_stack(ThreadTrace& thread) noexcept {
  StackInfo stack;
  signal_stack_of(thread, stack.alt_begin, stack.alt_end);
  return stack;
}

// Which threads still run, asked of the kernel once per thread per sweep
// (instances outnumber threads by far).
class ThreadLiveness {
 public:
  ThreadLiveness(uint32_t pid, ExitedThreads which) : pid_(pid), which_(which) {}
  bool alive(uint32_t tid) noexcept {
    if (tid == 0) return true;  // taken before its thread knew its id
    Entry& entry = entries_[(tid * 2654435761u) % kEntries];
    if (entry.tid != tid) entry = {tid, ask(tid)};
    return entry.alive;
  }

 private:
  bool ask(uint32_t tid) noexcept {
    if (!arch::raw_thread_alive(pid_, tid)) return false;
    if (which_ == ExitedThreads::kReaped || !read_proc_) return true;
    const ThreadExit exit = thread_exiting(tid);
    if (exit != ThreadExit::kUnknown) return exit == ThreadExit::kRunning;
    // Its stat file gone between the two looks: so is the thread (reaped
    // meanwhile). Otherwise refused by the program's opens
    // (descriptor_gate.h, up to 100 ms a time): not asked again in this
    // sweep.
    if (!arch::raw_thread_alive(pid_, tid)) return false;
    read_proc_ = false;
    return true;
  }

  static constexpr uint32_t kEntries = 509;
  struct Entry {
    uint32_t tid = 0;
    bool alive = false;
  };
  uint32_t pid_;
  ExitedThreads which_;
  bool read_proc_ = true;
  Entry entries_[kEntries];
};

DPROBE_HIT_PATH bool traced_here(const ThreadTrace& thread, AgentState& state) noexcept {
  return state.recording.load(std::memory_order_relaxed) && !thread.in_handler &&
         !thread.is_agent && !thread.in_agent;
}

DPROBE_HIT_PATH void run_events_guarded(const ReturnInstance& instance, arch::SavedRegs& regs,
                                        ThreadTrace& thread, AgentState& state) noexcept {
  if (!traced_here(thread, state)) return;
  thread.in_handler = true;
  run_return_events(instance, regs, thread, state);
  thread.in_handler = false;
}

}  // namespace

bool init_return_probes() {
  if (g_machinery != nullptr) return true;
  auto* machinery = new ReturnMachinery;
  auto stubs = arch::ReturnStubs::create(kInstances, machinery->pool.data(),
                                         core::ReturnInstancePool::stride());
  if (!stubs || !register_frames(stubs->eh_frame())) return false;
  machinery->stubs.emplace(std::move(*stubs));
  g_machinery = machinery;  // never freed: stubs may be on stacks until the end
  // Stacks unwound at a hit (--stacktrace) see through the return stubs.
  set_return_stubs(&*machinery->stubs, &machinery->pool);
  return true;
}

DPROBE_HIT_PATH void hijack_return(const core::Probe& probe, arch::SavedRegs& regs,
                                   const StackInfo& stack, uint64_t entry_time, ThreadTrace& thread,
                                   AgentState& state) noexcept {
  ReturnMachinery* m = g_machinery;
  if (m == nullptr) return;
  const uint64_t slot = arch::entry_frame(regs);
  const bool on_altstack = (stack.known ? stack : current_signal_stack(thread)).contains(slot);
  uint64_t return_address = 0;
  const bool readable = arch::read_return_address(regs, return_address);
  drop_stale(slot, return_address, on_altstack, thread, *m, state);
  sweep_zombies(thread, *m);
  const Admitted admitted = admitted_handlers(probe, thread, *m, state);
  const uint64_t handlers = admitted.handlers;
  if (handlers == 0) return;
  const auto index = take_instance(thread, *m);
  if (!index || !readable) {
    if (index) give_back(*index, thread, *m);
    count_misses(probe, handlers, state);
    return;
  }
  ReturnInstance& instance = m->pool.at(*index);
  instance.return_address = return_address;
  instance.stack_slot = slot;
  instance.handlers = handlers;
  const bool named = admitted.count <= ReturnInstance::kNamedEvents;
  instance.named_count = static_cast<uint8_t>(named ? admitted.count : 0);
  for (uint32_t i = 0; i < instance.named_count; ++i) instance.named_events[i] = admitted.named[i];
  instance.faultless_reads = probe.jump_only;
  instance.probe_id = probe.id;
  instance.function = probe.address;
  instance.on_altstack = on_altstack;
  instance.tid = thread.tid;
  instance.entry_time = entry_time;
  // A tail call out of a probed function returns through its stub: the
  // caller to name is the one the outer instance goes back to.
  const auto chained = m->stubs->index_of(return_address);
  instance.caller = chained ? m->pool.at(*chained).caller : return_address;
  fetch_entry_args(instance, admitted.entry_args, regs);
  instance.state.store(core::kInstanceLive, std::memory_order_release);
  const uint64_t stub = m->stubs->address(*index);
  if (!arch::replace_return_address(regs, stub)) {
    give_back(*index, thread, *m);
    count_misses(probe, handlers, state);
    return;
  }
  instance.prev = thread.return_top;
  thread.return_top = *index + 1;
  ++thread.return_depth;
}

void drop_exited_instances(uint32_t pid, ExitedThreads which) noexcept {
  ReturnMachinery* m = g_machinery;
  if (m == nullptr) return;
  // One sweep at a time (the agent's thread now and then, exit() once):
  // two could free the same instance twice.
  while (g_sweeping.test_and_set(std::memory_order_acquire)) arch::raw_syscall(SYS_sched_yield);
  AgentState& state = agent_state();
  ThreadLiveness liveness(pid, which);
  // Instances past the bound were never taken (a scan of all 32768 every
  // 50 ms would sweep megabytes through the caches the program's hits use).
  const uint32_t bound = m->pool.used_bound();
  for (uint32_t index = 0; index < bound; ++index) {
    ReturnInstance& instance = m->pool.at(index);
    uint32_t seen = instance.state.load(std::memory_order_acquire);
    if (seen == core::kInstanceFree || liveness.alive(instance.tid)) continue;
    if (seen == core::kInstanceLive) {
      if (!instance.state.compare_exchange_strong(seen, core::kInstanceZombie)) continue;
      count_misses(instance, state);
      seen = core::kInstanceZombie;
    }
    const bool gone = seen == core::kInstanceReturned || seen == core::kInstanceSpare;
    if (gone || !still_in_its_slot(index, *m)) free_instance(index, *m);
  }
  g_sweeping.clear(std::memory_order_release);
}

void return_probes_after_fork() noexcept {
  g_sweeping.clear(std::memory_order_relaxed);
  // The forking thread's spares carry its id in the parent: a sweep here
  // would take them for an exited thread's while this thread still has them.
  ThreadTrace& thread = current_thread();
  if (g_machinery != nullptr) {
    while (thread.spare_count != 0) free_instance(thread.spare[--thread.spare_count], *g_machinery);
  }
  thread.spare_count = 0;
}

bool is_return_stub(uint64_t address) noexcept {
  return g_machinery != nullptr && g_machinery->stubs->contains(address);
}

void want_float_return() noexcept {
  __atomic_store_n(&dprobe_read_float_return, 1, __ATOMIC_RELAXED);
}

}  // namespace dprobe::agent

// Called by dprobe_return_common (each ISA's return_trampoline_*.S) with the stub's index
// and the frame it saved the general registers in; answers the real return address.
// `float_return`: the low 64 bits of the floating-point return register
// (xmm0, d0), which the hit path never touches; on x86_64 read only while
// dprobe_read_float_return is set (a legacy SSE move can cost a state
// transition), 0 otherwise.
extern "C" __attribute__((visibility("hidden"))) DPROBE_HIT_PATH uint64_t
dprobe_return_hit(uint64_t index, dprobe::arch::SavedRegs* regs, uint64_t float_return) {
  using namespace dprobe::agent;
  AgentState& state = agent_state();
  ThreadTrace& thread = current_thread();
  thread.float_retval = float_return;
  ReturnMachinery& m = *g_machinery;
  const auto id = static_cast<uint32_t>(index);
  ReturnInstance& instance = m.pool.at(id);
  const uint64_t return_address = instance.return_address;
  if (in_live_stack(id, thread, m)) {
    // Newer instances of this thread belong to frames left without a return.
    while (thread.return_top != id + 1) drop_top(thread, m, state);
    run_events_guarded(instance, *regs, thread, state);
    thread.return_top = instance.prev;
    --thread.return_depth;
    give_back(id, thread, m);
  } else if (unlink_zombie(id, thread, m)) {
    give_back(id, thread, m);  // dropped too early (a coroutine's frame): home anyway
  } else {
    // Its thread is another (a coroutine moved): traced here; that thread
    // lets it go.
    uint32_t live = dprobe::core::kInstanceLive;
    if (instance.state.compare_exchange_strong(live, dprobe::core::kInstanceReturned)) {
      run_events_guarded(instance, *regs, thread, state);
    } else {
      instance.state.store(dprobe::core::kInstanceReturned, std::memory_order_release);
    }
  }
  return return_address;
}
