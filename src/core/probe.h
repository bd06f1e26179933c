// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One probed address. Several events at one address share it (the kernel's
// aggregate probe): one breakpoint, one slot, a list of handlers.
#ifndef DPROBE_CORE_PROBE_H_
#define DPROBE_CORE_PROBE_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/probe_insn.h"

namespace dprobe::core {

// A handler that is not an event: the probe engine's own use of a probe
// (following the dynamic loader). Called in the trap handler.
using InternalHandler = void (*)(const arch::SavedRegs& regs);

// An atomic flag that a copy takes the value of, as it is at the copy.
// Trap handlers read a probe's flags while the registry's one writer (the
// only one that stores them) copies the probe to change it.
class CopyableFlag : public std::atomic<bool> {
 public:
  using std::atomic<bool>::atomic;
  using std::atomic<bool>::operator=;
  CopyableFlag() noexcept = default;
  CopyableFlag(const CopyableFlag& other) noexcept : std::atomic<bool>(other.load()) {}
};

struct Probe {
  Probe() = default;
  // A probe is never changed where trap handlers may read it: the registry
  // copies it, changes the copy and publishes that. The compiler copies
  // every field, so none added later is left behind; explicit, so that no
  // probe is copied by accident.
  explicit Probe(const Probe&) = default;
  Probe& operator=(const Probe&) = delete;

  uint64_t address = 0;
  uint32_t id = 0;  // never reused: return instances name their probe by it
  arch::ProbeInsn insn;
  uint64_t slot = 0;               // the out-of-line copy
  std::vector<uint8_t> original;   // the bytes the breakpoint replaced
  std::vector<uint32_t> handlers;  // what to run on a hit, in the owner's numbering
  InternalHandler internal = nullptr;
  CopyableFlag armed{false};

  // Jump optimization (the kernel's optprobes): the displaced instructions
  // replaced by a jump to a trampoline of this probe's own.
  uint64_t function_address = 0;   // the containing function, decoded whole to
  uint64_t function_size = 0;      // prove the jump safe
  uint64_t trampoline = 0;         // 0: none (yet)
  uint64_t resume_copy = 0;        // the trampoline's copy of the displaced instructions
  uint8_t displaced_length = 0;    // bytes the jump covers
  std::vector<uint8_t> displaced;  // their original bytes
  CopyableFlag optimized{false};
  std::string breakpoint_reason;  // why it is not optimized
  // Kept a breakpoint for a passing reason (where a thread was): tried
  // again later (ProbeRegistry::optimize_again).
  bool optimize_again = false;
  // On code no breakpoint may go on (the C library runs it with every
  // signal blocked): only ever a jump, written while no other thread ran.
  // Disarmed while others run, the jump stays and calls no handler.
  bool jump_only = false;
  // A system call site rewritten for the agent's system call tracing, not
  // a probe: the address starts the instructions that end with the
  // `syscall` at syscall_at, and its trampoline runs that syscall between
  // the agent's enter and exit handlers (OptimizeEnv::syscall_*). No events.
  uint64_t syscall_at = 0;
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_PROBE_H_
