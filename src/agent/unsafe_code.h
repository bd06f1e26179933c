// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Code no breakpoint may go on: the agent's own, the signal return
// trampoline, and the C library functions that run with every signal
// blocked; and the functions no return probe may go on. A breakpoint
// raises SIGTRAP; when that signal is blocked the kernel resets it to its
// default action and the process dies. The kernel's uprobes take no
// signal, so they can go there; dprobe refuses a breakpoint (BLACKLISTED),
// the way the kernel keeps kprobes off its own fragile code, but takes a
// jump on the C library's functions when it can write it with no other
// thread running (`dprobe run`, before the program starts): a jump raises
// no signal, and needs no breakpoint to go on or, left in place, to come off.
#ifndef DPROBE_AGENT_UNSAFE_CODE_H_
#define DPROBE_AGENT_UNSAFE_CODE_H_

#include "core/probe_registry.h"

namespace dprobe::agent {

void blacklist_unsafe_code(core::ProbeRegistry& registry);

// Why a return probe may not go on the function at `function_address`, or
// nullptr when it may. A return probe swaps the return address for a stub
// of the agent's, which some functions can tell: those that return twice
// (setjmp, vfork, getcontext: the second return finds the instance gone)
// and those that act on behalf of their caller, found by the return
// address (dlopen, dlsym(RTLD_NEXT), dl_iterate_phdr: the stub is in no
// object). Entry probes are fine there.
const char* return_probe_refusal(uint64_t function_address);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_UNSAFE_CODE_H_
