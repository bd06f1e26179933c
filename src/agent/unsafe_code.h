// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Code no breakpoint may go on: the agent's own, the signal return
// trampoline, and the C library functions that run with every signal
// blocked. A breakpoint raises SIGTRAP; when that signal is blocked the
// kernel resets it to its default action and the process dies. The kernel's
// uprobes take no signal, so they can go there; dprobe refuses instead
// (BLACKLISTED), the way the kernel keeps kprobes off its own fragile code.
#ifndef DPROBE_AGENT_UNSAFE_CODE_H_
#define DPROBE_AGENT_UNSAFE_CODE_H_

#include "core/probe_registry.h"

namespace dprobe::agent {

void blacklist_unsafe_code(core::ProbeRegistry& registry);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_UNSAFE_CODE_H_
