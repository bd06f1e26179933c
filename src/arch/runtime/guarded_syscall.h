// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A system call that must not start once a counter moved: the agent's
// wait for a signal it keeps pending (agent/signal_thread.cc). The counter
// is compared inside a window of code; a signal handler that moves the
// counter while the thread is between the compare and the syscall
// instruction sends it to the interrupted exit (leave_guarded_window), so
// the call cannot begin after the signal came.
//
//   long r = arch::guarded_syscall(SYS_rt_sigtimedwait, a, b, c, d, &arrivals, seen);
//   if (r == arch::kGuardInterrupted) ...     // the counter had moved
//   ... in the handler, after moving the counter:
//   arch::leave_guarded_window(context);
#ifndef DPROBE_ARCH_RUNTIME_GUARDED_SYSCALL_H_
#define DPROBE_ARCH_RUNTIME_GUARDED_SYSCALL_H_

#include <ucontext.h>

#include <cstdint>

namespace dprobe::arch {

// What an interrupted guarded call returns: -ERESTARTNOHAND, which no
// completed call returns to user space.
inline constexpr long kGuardInterrupted = -512;

long guarded_syscall(long nr, long a, long b, long c, long d, const uint32_t* counter,
                     uint32_t seen) noexcept;

// A thread interrupted inside the window goes to the interrupted exit.
void leave_guarded_window(ucontext_t& context) noexcept;

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_GUARDED_SYSCALL_H_
