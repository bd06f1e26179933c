// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Each thread's view of the signals the agent holds (SIGTRAP, SIGSEGV,
// SIGBUS). They stay really unblocked, always: a breakpoint trap or a
// fault-safe read's fault while its signal is blocked would kill the
// process. What the program blocks of them is kept here instead, per
// thread, and a signal sent to it meanwhile is kept pending here, until the
// program unblocks it (then it is sent again, to this thread, with the same
// siginfo), waits for it (sigtimedwait and friends take it from here), or
// asks (sigpending).
//
// Inside the program's handler the handler's mask is in force, in this view
// too. A handler left by siglongjmp takes no exit through the agent: its
// frame is found stale later, from the stack pointer (code running below
// the handler's frame is still inside it) and from the real mask (changed
// behind the agent's back by siglongjmp).
#ifndef DPROBE_AGENT_SIGNAL_THREAD_H_
#define DPROBE_AGENT_SIGNAL_THREAD_H_

#include <signal.h>
#include <ucontext.h>

#include <cstdint>

#include "agent/signal_action.h"
#include "arch/runtime/guarded_syscall.h"

namespace dprobe::agent {

// The held signals the program has blocked on this thread, as it sees them
// at stack pointer `sp` with real mask `real` (frames of handlers already
// left are dropped first).
SignalMask program_blocked(uint64_t sp, SignalMask real);
// The program changed its mask (sigprocmask); `real` is the mask in force.
void set_program_blocked(SignalMask blocked, SignalMask real);

// The view alone, for the span of a call (sigsuspend's mask).
void set_view(SignalMask blocked);

// Held signals sent while blocked, kept for this thread.
SignalMask kept_pending();
void keep_pending(int sig, const siginfo_t& info, ucontext_t& context);
// Takes one kept signal of `wanted` (the lowest): its number, or 0.
int take_pending(SignalMask wanted, siginfo_t* info);
// Sends the kept signals the program no longer blocks again, to itself.
void release_unblocked();

// Around the program's handler: `handler_blocked` is the handler's mask,
// `real` the mask really in force while it runs.
// `frame_sp` is the calling agent frame's stack pointer.
void enter_handler(SignalMask handler_blocked, SignalMask real, ucontext_t& context,
                   uint64_t frame_sp);
// The handler returned: the held bits of the context's mask (the program
// may have changed them there) become the view; the real mask keeps none.
void leave_handler(ucontext_t& context, uint64_t frame_sp);

// A system call that waits for signals without missing one kept pending
// after the caller looked: `nr` with four arguments; kWaitInterrupted
// (a code the kernel never returns to user space) without waiting if a
// signal was kept after `seen` was read.
constexpr long kWaitInterrupted = arch::kGuardInterrupted;
uint32_t pending_arrivals();
long wait_syscall(long nr, long a, long b, long c, long d, uint32_t seen);

// After fork: the child has no signals pending.
void forget_pending();

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_SIGNAL_THREAD_H_
