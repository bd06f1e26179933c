// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Return probes (the kernel's kretprobes, task-keyed as its rethook): at a
// probed function's entry the return address is saved in an instance and
// replaced by a return stub's address; when the function returns there, the
// return events run, the real return address is put back, and the program
// goes on as if nothing happened.
//
// Instances whose frames were left without returning (longjmp, a C++
// exception, a thread's exit) are found, dropped and counted as misses:
// at a later entry, by their stack slot (at or below the new one, and no
// longer holding their stub), and at a return, as the ones above it.
#ifndef DPROBE_AGENT_RETURN_PROBES_H_
#define DPROBE_AGENT_RETURN_PROBES_H_

#include <cstdint>

#include "agent/agent_state.h"
#include "agent/hit/thread_trace.h"
#include "arch/probe_insn.h"

namespace dprobe::agent {

// Sets up the stubs and instances (once, when some event is a return
// event) and registers the stubs' unwind information with the program's
// unwinder. False if that fails.
bool init_return_probes();

// The thread's signal stack, as the trap's context tells it.
struct StackInfo {
  uint64_t alt_begin = 0;
  uint64_t alt_end = 0;
  bool known = true;  // an optimized hit has no signal context to tell it
  bool contains(uint64_t address) const { return address >= alt_begin && address < alt_end; }
  static StackInfo unknown() { return {0, 0, false}; }
};

// At the entry of a probe with return events: hijacks the return address
// for those of them that have a free instance; counts a miss for the rest.
// `entry_time` (the record clock) goes into their records.
void hijack_return(const core::Probe& probe, arch::SavedRegs& regs, const StackInfo& stack,
                   uint64_t entry_time, ThreadTrace& thread, AgentState& state) noexcept;

// Drops the instances of the threads of process `pid` that have exited,
// counting the live ones as misses; an instance whose stack slot still
// holds its stub waits as a zombie (its frame may be on a stack another
// thread runs, a coroutine's). For the agent's own thread, now and then,
// and at exit, when a thread already in the kernel's exit counts as gone.
enum class ExitedThreads { kReaped, kReapedOrExiting };
void drop_exited_instances(uint32_t pid, ExitedThreads which) noexcept;
// In a forked child: no sweep runs there yet, whatever the parent's did.
void return_probes_after_fork() noexcept;

// Whether `address` is one of the return stubs (for backtrace(3)).
bool is_return_stub(uint64_t address) noexcept;

// Some return event reads $retval:f32/f64: return hits pass the floating-
// point return register from now on (dprobe_return_common). Never unset.
void want_float_return() noexcept;

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_RETURN_PROBES_H_
