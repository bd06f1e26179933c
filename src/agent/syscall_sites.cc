// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/syscall_sites.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "agent/agent_state.h"
#include "agent/jump_optimizer.h"
#include "agent/syscall_dispatch.h"
#include "agent/syscall_site_plan.h"

namespace dprobe::agent {

void rewrite_syscall_sites() {
  if (site_rewrites_held()) return;
  const std::vector<uint64_t> sites = take_queued_sites();
  if (sites.empty() || !syscall_tracing_configured()) return;  // none, or the session is over
  AgentState& state = agent_state();
  if (!state.registry) return;
  uint64_t low = UINT64_MAX;
  uint64_t high = 0;
  for (const uint64_t syscall_at : sites) {
    const std::optional<core::ProbeSite> site = rewrite_site_for(syscall_at);
    if (!site) continue;
    std::lock_guard lock(state.registry_writer);
    if (state.registry->add_syscall_site(*site, syscall_at)) {
      low = std::min(low, site->address);
      high = std::max(high, site->address + 1);
    }
  }
  if (low < high) optimize_armed(low, high);
}

}  // namespace dprobe::agent
