// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A breakpoint hit, from the trap handler: find the probe, run its events'
// fetch programs into the thread's ring, then make the program go on (in
// the out-of-line slot, or past the emulated instruction). No lock, no
// allocation, no system call, nothing from libc: the handler may have
// interrupted libc itself, or a probed copy of it.
#ifndef DPROBE_AGENT_HIT_H_
#define DPROBE_AGENT_HIT_H_

#include <ucontext.h>

namespace dprobe::agent {

// True when the trap was one of our breakpoints (then handled).
bool handle_breakpoint(ucontext_t& context) noexcept;

// A breakpoint that is gone (disarmed while this thread was on its way to
// it): rewinds the program to run the restored instruction.
bool rewind_removed_breakpoint(ucontext_t& context) noexcept;

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_HIT_H_
