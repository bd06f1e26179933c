// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The probe engine's registry, in the manner of kernel/kprobes.c: probes
// are added (prepared: decoded, checked, given a slot), armed, found by
// address on every trap, and disarmed and removed, restoring every byte.
// Probes come and go while others are armed (libraries are loaded and
// unloaded): trap handlers read an immutable snapshot through an epoch
// reader, and writers publish a new one, one writer at a time.
//
//   auto registry = ProbeRegistry::create();
//   registry->add({address, function, size}, /*handler=*/0);   // armed when live
//   registry->arm_all();
//   { ProbeRegistry::Reader reader(*registry);                  // in a trap handler
//     const Probe* probe = reader.find(trap_address); ... }
//   registry->remove_range(begin, end);                         // an object goes away
#ifndef DPROBE_CORE_PROBE_REGISTRY_H_
#define DPROBE_CORE_PROBE_REGISTRY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/epoch.h"
#include "core/hit/probe_table.h"
#include "core/probe.h"
#include "core/probe_point.h"
#include "core/slot_allocator.h"
#include "core/text_patcher.h"

namespace dprobe::core {

struct ProbeSite {
  uint64_t address = 0;
  uint64_t function_address = 0;  // equal to address when the function is unknown
  uint64_t function_size = 0;
};

// The bytes a jump is about to cover, for the threads' census: no thread
// may go on running them in place once the jump's tail is written.
struct DisplacedRange {
  uint64_t begin = 0;  // the probe address: a thread there is outside (it traps)
  uint64_t end = 0;
  uint64_t copy = 0;      // the trampoline's copy of [begin, end), at the same offsets
  uint64_t slot = 0;      // the probe's out-of-line slot, [slot, slot_end): a thread
  uint64_t slot_end = 0;  // there is on its way back into the bytes
  // A system call site's range ends with the syscall: a thread waiting in
  // that call (its pc at `end`) may be sent back to the syscall to restart
  // it, inside the bytes.
  bool restarts_at_end = false;
};

// What jump optimization needs from the run-time around the registry.
struct OptimizeEnv {
  uint64_t handler = 0;  // the trampolines call handler(SavedRegs*, probe address)
  // A rewritten system call site's trampoline calls these around the call:
  // handler(SavedRegs*, the syscall's address). 0: sites are not rewritten.
  uint64_t syscall_enter = 0;
  uint64_t syscall_exit = 0;
  // Room for the sites' gadgets (arch::kSyscallGadgetBytes each), in the
  // text Syscall User Dispatch lets through: a call made there costs the
  // kernel no look at the selector. Used up in order, never freed (as
  // trampolines); without room a site makes its call from its trampoline.
  uint64_t syscall_gadgets = 0;
  uint64_t syscall_gadgets_end = 0;
  // The exception landing pads of the code in [begin, end), or why unknown.
  std::function<Result<std::vector<uint64_t>, std::string>(uint64_t begin, uint64_t end)>
      landing_pads;
  // Makes sure no other thread of the process runs the bytes of a range in
  // place: each is proven outside them for good (a trap at a range's first
  // byte resumes in its copy), or moved from inside to the matching place
  // of the copy. Whether each range is clear, or why no thread's place
  // could be known.
  std::function<Result<std::vector<bool>, std::string>(const std::vector<DisplacedRange>&)>
      clear_threads;
  // Serializes every core of the process (membarrier SYNC_CORE).
  std::function<void()> sync_cores;
  // Reads the program's memory, fault-safe: the jump tables a function's
  // analysis looks into. Empty: they keep its probes breakpoints.
  arch::ReadMemory read_memory;
};

// What trap handlers see: every probe, by address and by id.
struct ProbeSnapshot {
  ProbeTable by_address;
  ProbeTable by_id;
  std::vector<const Probe*> probes;
};

class ProbeRegistry {
 public:
  static Result<ProbeRegistry> create();
  ProbeRegistry(ProbeRegistry&&) noexcept;
  ProbeRegistry& operator=(ProbeRegistry&&) = delete;
  ~ProbeRegistry();

  // Addresses no probe may take, with the reason given when one tries.
  // `as_jump`: no breakpoint, but a jump may go there while direct jumps
  // are allowed.
  void blacklist(uint64_t begin, uint64_t end, std::string reason, bool as_jump = false);
  // Addresses the agent itself wrote over (agent/exit_hold.cc): no probe,
  // breakpoint or jump, whatever else the blacklist says of them.
  void reserve(uint64_t begin, uint64_t end, std::string reason);
  // Whether jumps may be written without a breakpoint first: only while no
  // other thread of the process runs (the agent's start, before the
  // program's) and optimization is wanted. Such a probe is disarmed while
  // other threads run by leaving its jump, calling nothing.
  // `avoid`: places a thread goes back to (the one arming, its handlers'):
  // no direct jump covers one.
  void allow_direct_jumps(bool allowed, std::vector<uint64_t> avoid = {}) {
    direct_jumps_ = allowed;
    direct_jump_avoid_ = std::move(avoid);
  }

  // Adds `handler` at the site; the first handler at an address prepares
  // the probe there. Once the registry is live (arm_all was called), a new
  // probe is armed at once.
  Result<void, arch::Refusal> add(const ProbeSite& site, uint32_t handler);
  // The engine's own probe: `internal` runs on every hit.
  Result<void, arch::Refusal> add_internal(const ProbeSite& site, InternalHandler internal);
  // A system call site to rewrite (Probe::syscall_at): the instructions from
  // site.address to the `syscall` at `syscall_at`, a breakpoint until
  // optimize_range makes them a jump. Never where a probe is.
  Result<void, arch::Refusal> add_syscall_site(const ProbeSite& site, uint64_t syscall_at);

  // Arms every probe (and makes the registry live), or none.
  Result<void> arm_all();
  // Restores every patched byte; probes stay registered. With the
  // process's other threads stopped (`others_stopped`: the CLI holds them
  // at detach), each jump goes back in one write, no breakpoint between,
  // and a jump left in place by an earlier disarm goes back too.
  void disarm_all(bool others_stopped = false) noexcept;
  // Disarms the probes in [begin, end), or arms them again.
  void disarm_range(uint64_t begin, uint64_t end) noexcept;
  void arm_range(uint64_t begin, uint64_t end) noexcept;
  // Jump optimization: off until enabled. optimize_range turns the armed
  // probes of [begin, end) into jumps where that is safe; the others stay
  // breakpoints, each with its reason. Disarming undoes it first.
  void enable_optimization(OptimizeEnv env);
  void optimize_range(uint64_t begin, uint64_t end);
  // Tries again the probes optimize_range kept breakpoints for a passing
  // reason: a thread inside the bytes, or a handler that returns there.
  // Returns whether some are still waiting for another try.
  bool optimize_again();
  // How many times optimize_range has left probes to try again: a caller
  // that tries on a schedule starts it over when this changes. Read
  // without the writer's lock.
  uint64_t optimize_again_requests() const { return again_requests_.load(); }
  std::vector<ProbeState> states(uint64_t begin, uint64_t end) const;

  // Forgets the probes in [begin, end): an object that was unmapped. Their
  // bytes are not written back (there is nothing there any more).
  void remove_range(uint64_t begin, uint64_t end);

  // In a forked child, before anything is armed or disarmed there.
  Result<void> reopen_text_patcher() { return patcher_.reopen(); }

  // Frees `object` once no trap handler that could have seen it is left.
  template <typename T>
  void retire(std::unique_ptr<T> object) {
    epochs_.retire(std::move(object));
  }

  // Frees what trap handlers can no longer hold.
  void reclaim() { epochs_.reclaim(); }
  // Waits (a while) until every hit handler that may have seen the probes
  // before the call has returned: after disarm_all, their records are all
  // written. False if one kept running past the wait.
  bool wait_for_handlers() { return epochs_.synchronize(); }

  // Readers (probe hits) enter without a fence once the process is
  // registered with membarrier (core/epoch.h). Again in a forked child,
  // after forked().
  bool use_process_barrier() noexcept { return epochs_.use_process_barrier(); }
  void forked() noexcept { epochs_.forked(); }
  // Frees the reader slots of threads that are gone.
  void reap_readers(bool (*alive)(uint32_t tid)) noexcept { epochs_.reap(alive); }

  // The trap handler's view, for as long as it lives.
  class Reader {
   public:
    explicit Reader(const ProbeRegistry& registry) noexcept
        : guard_(const_cast<EpochDomain&>(registry.epochs_)),
          snapshot_(registry.snapshot_.load(std::memory_order_acquire)) {}
    const Probe* find(uint64_t address) const noexcept {
      return snapshot_ ? snapshot_->by_address.find(address) : nullptr;
    }
    const Probe* find_by_id(uint32_t id) const noexcept {
      return snapshot_ ? snapshot_->by_id.find(id) : nullptr;
    }
    // The probe whose out-of-line slot holds `pc`, for faults there (shown
    // to the program at the probed address). A scan: faults are rare.
    const Probe* find_by_slot(uint64_t pc) const noexcept;
    // The rewritten system call site whose trampoline holds `pc`.
    const Probe* find_syscall_site_by_trampoline(uint64_t pc) const noexcept;

   private:
    EpochReader guard_;
    const ProbeSnapshot* snapshot_;
  };

  size_t size() const { return probes_.size(); }

 private:
  explicit ProbeRegistry(TextPatcher patcher);
  Result<Probe*, arch::Refusal> probe_at(const ProbeSite& site);
  Result<void, arch::Refusal> publish_and_arm(Probe& probe);
  Result<std::unique_ptr<Probe>, arch::Refusal> prepare(const ProbeSite& site);
  Result<uint64_t, arch::Refusal> slot_for(const arch::ProbeInsn& insn);
  struct Range;
  const Range* blacklisted(uint64_t address) const;
  const Probe* jump_only_around(uint64_t address) const;
  Result<void> arm_jump(Probe& probe);
  void prepare_direct_jumps();
  bool write_jump_at_once(Probe& probe);
  void publish();
  Result<void> arm(Probe& probe);
  void disarm(Probe& probe) noexcept;
  // Trap handlers may be reading `held`: it is changed in a copy that takes
  // its place (published later), the old one freed once none can hold it.
  Probe& replace_with_copy(std::unique_ptr<Probe>& held);

  // Jump optimization (probe_registry_optimize.cc).
  struct TrampolineKey {
    uint64_t address;
    std::vector<uint8_t> displaced;
    uint64_t syscall_at;  // a system call site's is not a probe's
    auto operator<=>(const TrampolineKey&) const = default;
  };
  std::vector<uint8_t> original_code(uint64_t begin, uint64_t size) const;
  bool neighbour_inside(const Probe& probe, uint64_t end) const;
  Result<void, std::string> prepare_jump(Probe& probe);
  Result<uint64_t, std::string> trampoline_for(const Probe& probe, const arch::OptimizePlan& plan);
  uint64_t next_gadget() const;  // 0: none left
  std::vector<Probe*> prepare_jumps(uint64_t begin, uint64_t end, bool again_only);
  void optimize_prepared(const std::vector<Probe*>& prepared);
  void note_passing_reason(const std::vector<Probe*>& probes, const std::string& reason);
  static std::vector<uint8_t> jump_bytes(const Probe& probe);
  bool write_tail(Probe& probe, std::span<const uint8_t> jump);
  void write_head(Probe& probe, std::span<const uint8_t> jump);
  void restore_tail(const Probe& probe) noexcept;
  void unoptimize(Probe& probe) noexcept;
  bool restore_at_once(Probe& probe) noexcept;
  void unoptimize_around(uint64_t address) noexcept;

  struct Range {
    uint64_t begin;
    uint64_t end;
    std::string reason;
    bool as_jump;
  };
  // An out-of-line slot, kept for its address and instruction: a library
  // loaded again at the same place gets the same slot back, so that
  // loading it over and over does not use up memory (a slot is never
  // freed: a thread may be stopped in one for any length of time).
  struct SlotKey {
    uint64_t address;
    std::array<uint8_t, arch::kMaxInsnBytes> bytes;
    auto operator<=>(const SlotKey&) const = default;
  };

  TextPatcher patcher_;
  std::unique_ptr<SlotAllocator> slots_ = std::make_unique<SlotAllocator>();
  std::map<SlotKey, uint64_t> slot_cache_;
  std::map<uint64_t, std::unique_ptr<Probe>> probes_;
  std::vector<Range> blacklist_;
  std::map<TrampolineKey, uint64_t> trampolines_;
  std::optional<OptimizeEnv> optimizer_;
  uint64_t gadgets_used_ = 0;  // bytes of optimizer_->syscall_gadgets
  uint32_t next_id_ = 1;
  bool live_ = false;
  bool direct_jumps_ = false;
  std::vector<uint64_t> direct_jump_avoid_;
  bool again_pending_ = false;  // a probe waits for optimize_again
  uint64_t passing_refusals_ = 0;
  std::atomic<uint64_t> again_requests_{0};
  EpochDomain epochs_;
  std::atomic<const ProbeSnapshot*> snapshot_{nullptr};
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_PROBE_REGISTRY_H_
