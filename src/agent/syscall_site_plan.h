// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Which syscall instructions may be rewritten into jumps (syscall_sites.h),
// and where the instructions the jump replaces start: apart from the
// rewriting, which needs the session, so that the choice is tested alone.
//
//   if (auto site = rewrite_site_for(syscall_at)) registry.add_syscall_site(*site, syscall_at);
#ifndef DPROBE_AGENT_SYSCALL_SITE_PLAN_H_
#define DPROBE_AGENT_SYSCALL_SITE_PLAN_H_

#include <cstdint>
#include <optional>

#include "core/probe_registry.h"

namespace dprobe::agent {

// The site whose jump replaces the instructions ending with the syscall at
// `syscall_at`, in its function as memory has it now (the registry plans
// again over the original bytes, and refuses if they start elsewhere).
// nullopt where no jump may go: the vDSO (the kernel's text), code with no
// unwind tables to bound its function (or a function over 1 MiB), or
// instructions the plan refuses (too few before the syscall, a branch
// into them).
std::optional<core::ProbeSite> rewrite_site_for(uint64_t syscall_at);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_SYSCALL_SITE_PLAN_H_
