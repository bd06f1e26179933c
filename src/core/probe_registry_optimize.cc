// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Jump optimization of armed probes, the kernel's optprobes for a process
// that keeps running: the probed instruction and those after it (at least
// a jump's worth) are replaced by a jump to a trampoline of the probe's own
// that calls the hit handler, runs the displaced instructions and jumps
// back. No trap, no signal.
//
// Never half-written: a probe is a breakpoint first. Its trampoline is
// written and published, so that a trap there resumes in the trampoline's
// copy of the displaced instructions and never in them; once no trap
// handler can still hold the older view (two epoch flips) and every other
// thread is known to be outside the bytes to be replaced and the probe's
// out-of-line slot (or was moved into the copy), the jump's tail is written,
// then its head (the breakpoint's bytes), with every core serialized between
// the steps.
// Undoing it is the reverse, and needs no such check: no thread can be
// inside bytes that only a jump skips over.
#include <algorithm>

#include "arch/runtime/safe_memory.h"
#include "core/probe_registry.h"

namespace dprobe::core {
namespace {

bool strictly_inside(uint64_t pc, uint64_t begin, uint64_t end) { return pc > begin && pc < end; }

// The jump's head: the bytes of a breakpoint, written last over it (x86_64:
// int3's one byte, then the jmp's opcode). On arm64 the head is the whole
// branch, one aligned word written at once: there is no tail.
size_t head_length() { return arch::breakpoint_insn().size(); }

// Why a probe stays a breakpoint.
Unexpected<std::string> refuse(std::string why) { return unexpected(std::move(why)); }

}  // namespace

void ProbeRegistry::enable_optimization(OptimizeEnv env) { optimizer_ = std::move(env); }

// The function's bytes as the program has them: the breakpoints and jumps
// of armed probes read back as what they replaced.
std::vector<uint8_t> ProbeRegistry::original_code(uint64_t begin, uint64_t size) const {
  std::vector<uint8_t> code(size);
  if (!arch::safe_read(code.data(), begin, size)) return {};
  for (auto it = probes_.lower_bound(begin); it != probes_.end() && it->first < begin + size;
       ++it) {
    const auto& [address, probe] = *it;
    if (probe->optimized.load() || probe->displaced_length != 0) {
      const size_t n = std::min<size_t>(probe->displaced.size(), begin + size - address);
      std::copy_n(probe->displaced.begin(), n,
                  code.begin() + static_cast<ptrdiff_t>(address - begin));
    }
    const size_t n = std::min<size_t>(probe->original.size(), begin + size - address);
    std::copy_n(probe->original.begin(), n, code.begin() + static_cast<ptrdiff_t>(address - begin));
  }
  return code;
}

// Another probe strictly inside the bytes a jump at `probe` would cover.
bool ProbeRegistry::neighbour_inside(const Probe& probe, uint64_t end) const {
  auto it = probes_.upper_bound(probe.address);
  return it != probes_.end() && it->first < end;
}

Result<void, std::string> ProbeRegistry::prepare_jump(Probe& probe) {
  if (probe.internal != nullptr) return refuse("the agent's own probe");
  if (probe.function_size == 0 || probe.function_address > probe.address) {
    return refuse("the function's extent is unknown");
  }
  const std::vector<uint8_t> code = original_code(probe.function_address, probe.function_size);
  if (code.empty()) return refuse("the function's code is not readable");
  auto pads = optimizer_->landing_pads(probe.function_address,
                                       probe.function_address + probe.function_size);
  if (!pads) return refuse(pads.error());
  auto plan = probe.syscall_at != 0
                  ? arch::plan_syscall_rewrite(code, probe.function_address, probe.syscall_at,
                                               *pads, optimizer_->read_memory)
                  : arch::plan_optimization(code, probe.function_address, probe.address, *pads,
                                            optimizer_->read_memory);
  if (!plan) return refuse(plan.error());
  if (arch::displaced_address(*plan) != probe.address) {
    return refuse("the system call's instructions start elsewhere");
  }
  const uint64_t end = probe.address + arch::displaced_length(*plan);
  if (neighbour_inside(probe, end))
    return refuse("another probe is inside the instructions it displaces");
  auto trampoline = trampoline_for(probe, *plan);
  if (!trampoline) return refuse(trampoline.error());
  probe.trampoline = *trampoline;
  probe.resume_copy = probe.syscall_at != 0
                          ? arch::syscall_trampoline_copy_address(*plan, *trampoline, probe.address)
                          : arch::trampoline_copy_address(*plan, *trampoline, probe.address);
  probe.displaced_length = static_cast<uint8_t>(end - probe.address);
  const auto offset = static_cast<ptrdiff_t>(probe.address - probe.function_address);
  probe.displaced.assign(code.begin() + offset, code.begin() + offset + probe.displaced_length);
  return {};
}

// A trampoline is kept for its probe's address and displaced bytes: a
// library loaded again at the same place gets it back (it is never freed:
// a thread may be in one for any length of time).
Result<uint64_t, std::string> ProbeRegistry::trampoline_for(const Probe& probe,
                                                            const arch::OptimizePlan& plan) {
  TrampolineKey key{probe.address, arch::displaced_bytes(plan), probe.syscall_at};
  if (auto cached = trampolines_.find(key); cached != trampolines_.end()) return cached->second;
  const bool site = probe.syscall_at != 0;
  if (site && optimizer_->syscall_enter == 0) return refuse("system call sites are not rewritten");
  const uint64_t size = site ? arch::kSyscallTrampolineBytes : arch::kTrampolineBytes;
  auto memory = slots_->allocate(probe.address, size);
  if (!memory) return refuse(memory.error().message);
  std::vector<uint8_t> bytes(size);
  std::vector<uint8_t> gadget(site ? arch::kSyscallGadgetBytes : 0);
  const uint64_t gadget_at = site ? next_gadget() : 0;
  auto written =
      site ? arch::write_syscall_trampoline(plan, *memory, optimizer_->syscall_enter,
                                            optimizer_->syscall_exit, probe.syscall_at, gadget_at,
                                            bytes, gadget)
           : arch::write_trampoline(plan, *memory, optimizer_->handler, probe.address, bytes);
  if (!written) return refuse(written.error());
  bytes.resize(*written);
  // The gadget first: nothing reaches it before its trampoline is written.
  if (gadget_at != 0) {
    if (auto copied = patcher_.write(gadget_at, gadget); !copied) {
      return refuse(copied.error().message);
    }
    gadgets_used_ += gadget.size();
  }
  if (auto copied = patcher_.write(*memory, bytes); !copied) return refuse(copied.error().message);
  trampolines_.emplace(std::move(key), *memory);
  return *memory;
}

uint64_t ProbeRegistry::next_gadget() const {
  const uint64_t at = optimizer_->syscall_gadgets + gadgets_used_;
  const bool room = arch::kSyscallGadgetBytes != 0 && optimizer_->syscall_gadgets != 0 &&
                    at + arch::kSyscallGadgetBytes <= optimizer_->syscall_gadgets_end;
  return room ? at : 0;
}

void ProbeRegistry::optimize_range(uint64_t begin, uint64_t end) {
  if (!optimizer_ || !live_) return;
  const uint64_t refusals_before = passing_refusals_;
  optimize_prepared(prepare_jumps(begin, end, /*again_only=*/false));
  if (passing_refusals_ != refusals_before) again_requests_.fetch_add(1);
}

bool ProbeRegistry::optimize_again() {
  if (!optimizer_ || !live_ || !again_pending_) return false;
  again_pending_ = false;
  optimize_prepared(prepare_jumps(0, UINT64_MAX, /*again_only=*/true));
  return again_pending_;
}

void ProbeRegistry::optimize_prepared(const std::vector<Probe*>& prepared) {
  if (prepared.empty()) return;
  // Every trap from now on resumes in a trampoline: wait out the handlers
  // that may still resume in a slot.
  if (!epochs_.synchronize()) {
    return note_passing_reason(prepared, "trap handlers did not drain in time");
  }
  optimizer_->sync_cores();
  std::vector<DisplacedRange> ranges;
  for (const Probe* probe : prepared) {
    ranges.push_back({probe->address, probe->address + probe->displaced_length, probe->resume_copy,
                      probe->slot, probe->slot + arch::kSlotBytes, probe->syscall_at != 0});
  }
  auto clear = optimizer_->clear_threads(ranges);
  if (!clear) return note_passing_reason(prepared, clear.error());
  std::vector<Probe*> tails_written;
  for (size_t i = 0; i < prepared.size(); ++i) {
    Probe* probe = prepared[i];
    if (!(*clear)[i]) {
      note_passing_reason({probe},
                          "a thread stayed inside the instructions it displaces, or a signal "
                          "handler returns there");
    } else if (write_tail(*probe, jump_bytes(*probe))) {
      tails_written.push_back(probe);
    }
  }
  optimizer_->sync_cores();
  for (Probe* probe : tails_written) write_head(*probe, jump_bytes(*probe));
  optimizer_->sync_cores();
}

// Gives every armed, not yet optimized probe of [begin, end) (`again_only`:
// of those to try again) its trampoline, or its reason to stay a
// breakpoint; publishes the result.
std::vector<Probe*> ProbeRegistry::prepare_jumps(uint64_t begin, uint64_t end, bool again_only) {
  std::vector<Probe*> prepared;
  for (auto& [address, probe] : probes_) {
    if (address < begin || address >= end || !probe->armed.load() || probe->optimized.load() ||
        probe->internal != nullptr || (again_only && !probe->optimize_again)) {
      continue;
    }
    Probe& copy = replace_with_copy(probe);
    copy.optimize_again = false;
    if (auto ready = prepare_jump(copy); !ready) {
      copy.breakpoint_reason = ready.error();
    } else {
      copy.breakpoint_reason.clear();
      prepared.push_back(&copy);
    }
  }
  publish();
  return prepared;
}

// Where threads were keeps the probes breakpoints for now, not for good.
void ProbeRegistry::note_passing_reason(const std::vector<Probe*>& probes,
                                        const std::string& reason) {
  for (Probe* probe : probes) {
    probe->breakpoint_reason = reason;
    probe->optimize_again = true;
  }
  if (probes.empty()) return;
  again_pending_ = true;
  ++passing_refusals_;
}

// Tail first, the head last (every core serialized in between, by the
// caller, for all the probes of a batch at once): a thread sees the
// breakpoint or the whole jump, never a part of it.
bool ProbeRegistry::write_tail(Probe& probe, std::span<const uint8_t> jump) {
  const size_t head = head_length();
  if (jump.size() <= head) return true;
  if (patcher_.write(probe.address + head, jump.subspan(head))) return true;
  restore_tail(probe);
  probe.breakpoint_reason = "the jump could not be written";
  return false;
}

// A probe that may not be a breakpoint becomes a jump at once: nothing
// else runs (allow_direct_jumps), so no thread can see a half-written one.
// A jump left from before (disarmed while others ran) is taken back as is.
Result<void> ProbeRegistry::arm_jump(Probe& probe) {
  if (!probe.optimized.load() && !(direct_jumps_ && write_jump_at_once(probe))) {
    return unexpected(Error{"the jump could not be written"});
  }
  probe.armed.store(true);
  return {};
}

// Tail, then head, with nothing called in between that a probe
// could be on: this very thread may call the function (malloc, say) the
// moment the patcher returns, and between the two writes the bytes are
// neither the old instructions nor the jump. So the bytes are made
// first, and the patcher and the barrier are raw system calls.
bool ProbeRegistry::write_jump_at_once(Probe& probe) {
  for (const uint64_t place : direct_jump_avoid_) {
    if (strictly_inside(place, probe.address, probe.address + probe.displaced_length)) {
      probe.breakpoint_reason = "a thread goes back inside the instructions it displaces";
      return false;
    }
  }
  const std::vector<uint8_t> jump = jump_bytes(probe);
  if (!write_tail(probe, jump)) return false;
  optimizer_->sync_cores();
  write_head(probe, jump);
  optimizer_->sync_cores();
  return probe.optimized.load();
}

// Alone (allow_direct_jumps), every probe's jump is made ready before
// anything is armed, in place (no thread can hit a probe that is not
// armed), and arm() writes it at once: no breakpoint first, and no trap in
// the C library the analysis itself calls.
void ProbeRegistry::prepare_direct_jumps() {
  for (auto& [address, probe] : probes_) {
    if (probe->internal != nullptr || probe->trampoline != 0 || probe->armed.load()) continue;
    if (auto ready = prepare_jump(*probe); !ready) probe->breakpoint_reason = ready.error();
  }
}

// The probe that may not be a breakpoint whose jump covers `address`.
const Probe* ProbeRegistry::jump_only_around(uint64_t address) const {
  for (const auto& [at, probe] : probes_) {
    if (probe->jump_only && strictly_inside(address, at, at + probe->displaced_length)) {
      return probe.get();
    }
  }
  return nullptr;
}

std::vector<uint8_t> ProbeRegistry::jump_bytes(const Probe& probe) {
  return arch::site_jump_bytes(probe.address, probe.trampoline, probe.displaced_length);
}

void ProbeRegistry::write_head(Probe& probe, std::span<const uint8_t> jump) {
  if (patcher_.write(probe.address, jump.first(head_length()))) {
    probe.optimized.store(true);
    return;
  }
  restore_tail(probe);
  probe.breakpoint_reason = "the jump could not be written";
}

void ProbeRegistry::restore_tail(const Probe& probe) noexcept {
  const size_t head = head_length();
  if (probe.displaced.size() <= head) return;
  (void)patcher_.write(probe.address + head,
                       std::span<const uint8_t>(probe.displaced).subspan(head));
  if (optimizer_) optimizer_->sync_cores();
}

// Back to a breakpoint: the head traps again (into the trampoline's
// copy), then the displaced bytes come back.
void ProbeRegistry::unoptimize(Probe& probe) noexcept {
  if (!probe.optimized.load()) return;
  if (!patcher_.write(probe.address, arch::breakpoint_insn())) return;
  if (optimizer_) optimizer_->sync_cores();
  restore_tail(probe);
  probe.optimized.store(false);
}

// Nothing else runs: every byte the probe changed comes back in one write
// (a thread stopped in the trampoline's copy jumps back past them, as
// before). Whether a jump was taken back.
bool ProbeRegistry::restore_at_once(Probe& probe) noexcept {
  if (probe.optimized.load()) {
    if (!patcher_.write(probe.address, probe.displaced)) return false;
    probe.optimized.store(false);
    probe.armed.store(false);
    return true;
  }
  disarm(probe);
  return false;
}

// A new probe at `address`: an optimized one whose jump covers it goes back
// to a breakpoint first.
void ProbeRegistry::unoptimize_around(uint64_t address) noexcept {
  for (auto& [at, probe] : probes_) {
    if (probe->optimized.load() && !probe->jump_only &&
        strictly_inside(address, at, at + probe->displaced_length)) {
      unoptimize(*probe);
      probe->breakpoint_reason = "another probe is inside the instructions it displaces";
    }
  }
}

std::vector<ProbeState> ProbeRegistry::states(uint64_t begin, uint64_t end) const {
  std::vector<ProbeState> states;
  for (const auto& [address, probe] : probes_) {
    if (address < begin || address >= end || !probe->armed.load() || probe->internal != nullptr ||
        probe->syscall_at != 0) {
      continue;
    }
    states.push_back({address, probe->optimized.load(), probe->breakpoint_reason});
  }
  return states;
}

}  // namespace dprobe::core
