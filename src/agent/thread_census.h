// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Where the process's other threads are, for the jump optimizer
// (core::OptimizeEnv::clear_threads): before a jump's tail overwrites
// instructions, no thread may be inside them, mid-way, in place.
//
// By the time the census runs, a trap at a range's first byte resumes in
// the trampoline's copy, so a thread seen outside a range once can never be
// inside it again: one look per thread is enough, at any moment. A thread
// that sits in the kernel is looked at in /proc/self/task/TID/syscall (its
// user pc), without disturbing it. A thread that is on a core (or stopped
// inside a range) is asked: a SIGSEGV queued to it with the agent's tag,
// answered by the agent's handler from the interrupted context, which also
// moves a thread found inside a range to the matching place of the copy.
//
// Why SIGSEGV: the agent holds it (the program never blocks it for real),
// and a fault that comes while the question is pending, and is merged with
// it, happens again when the handler returns (a trap would not: that rules
// out SIGTRAP). Only threads on a core are asked, and a signal can make a
// system call entered meanwhile fail with EINTR where SA_RESTART does not
// restart it (epoll_wait, poll): the window is that of one question.
//
// Not seen: a pc saved in a signal frame (a thread interrupted inside a
// range, running a handler of the program's now).
#ifndef DPROBE_AGENT_THREAD_CENSUS_H_
#define DPROBE_AGENT_THREAD_CENSUS_H_

#include <signal.h>
#include <ucontext.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/runtime/signal_frames.h"
#include "base/result.h"
#include "core/probe_registry.h"

namespace dprobe::agent {

// The signal questions come by.
constexpr int kQuestionSignal = SIGSEGV;

// Around an exec: no question is asked meanwhile, and none is left pending
// for the new program (which would die of the SIGSEGV); the caller waits
// for a round already open. A thread asked meanwhile stays unknown.
void hold_questions_for_exec() noexcept;
void release_questions() noexcept;

// Sends thread `tid` of this process kQuestionSignal queued with `tag`
// above `low` in its si_value, as the census asks its questions (the
// agent's other requests to its threads go the same way): whether it went.
bool send_tagged_signal(uint32_t tid, uint32_t tag, uint32_t low = 0);
// The tag of such a signal sent by this process; 0 for any other signal.
uint32_t tag_of(int sig, const siginfo_t& info);

// The ids of the process's threads but the caller's (/proc/self/task);
// nullopt when they cannot be listed.
std::optional<std::vector<uint32_t>> other_threads();

// Whether each range is clear of the other threads (see above), or why a
// thread's place could not be known.
Result<std::vector<bool>, std::string> clear_threads(
    const std::vector<core::DisplacedRange>& ranges);

// Whether the caller is the process's only thread, the parked one aside.
bool no_other_threads();
// `attach`: the program's thread that loads the agent waits, parked (every
// signal blocked, in a futex wait), while an agent thread arms: it runs
// nothing until let go, and is no other thread for direct jumps; where it
// goes back to is among the hidden places. 0: none parked.
void set_parked_thread(uint32_t tid) noexcept;
// Waits (up to a second) until the parked thread is seen waiting in the
// kernel: false if it never is.
bool parked_thread_settled();
// `attach`: where the thread that loads the agent goes back to once the
// CLI gives it its registers back (protocol::Probes::caller_places); at
// most 4, forgotten with an empty list once the CLI says it has gone on
// (MessageType::kResumed).
void set_caller_places(std::span<const uint64_t> places) noexcept;

// Places threads go back to that no look at their pcs shows: those of the
// signal frames on the calling thread's stack (attached, it may be the
// program's thread, stopped wherever it was), and the caller places; and
// the parked thread's: its pc, the system call a restart takes it back to,
// and the signal frames on its stack. nullopt when a stack could not be
// read, or the parked thread is not seen waiting. Under the registry's
// writer lock.
std::optional<std::vector<arch::InterruptedPlace>> hidden_return_places();

// In the agent's signal handler: whether the signal is a question of the
// census (then it is answered, and is not the program's).
bool answer_question(int sig, const siginfo_t* info, ucontext_t& context);

// ---- The census's reading of what it sees, apart from the seeing ----------

// What /proc/self/task/TID/syscall says: "nr arg1..arg6 sp pc" (hex but
// nr) for a thread in a system call, "-1 sp pc" for one stopped outside
// one, "running" for one on a core (the kernel cannot say where then);
// nothing once the thread is gone.
struct TaskSyscall {
  enum Kind { kGone, kStopped, kOnCore } kind = kGone;
  long nr = -1;      // kStopped: the system call, -1 outside one
  uint64_t arg = 0;  // its first argument (vfork's flags)
  uint64_t sp = 0;   // where the thread goes back to: its stack pointer
  uint64_t pc = 0;   // and pc
};
TaskSyscall parse_task_syscall(const std::string& text);

// The first of `ranges` whose bytes past its first, or whose slot, hold
// `pc`; kInNoRange when none does. `waiting`: the pc of a thread in a
// system call, which a restart would take back to the syscall instruction
// before it (a range that ends with one holds its end then).
constexpr size_t kInNoRange = SIZE_MAX;
size_t range_holding(uint64_t pc, const core::DisplacedRange* ranges, size_t count,
                     bool waiting = false);

// Whether a thread stopped in system call `nr` with first argument `arg`
// waits in vfork (or clone, clone3 with CLONE_VFORK): its child runs this
// process's code, in this memory, until it execs or exits, and is another
// process, so no census of threads sees it; the wait ends when it does.
// clone3's flags are read from its struct clone_args at `arg`.
bool waits_in_vfork(long nr, uint64_t arg);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_THREAD_CENSUS_H_
