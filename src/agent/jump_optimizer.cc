// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/jump_optimizer.h"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/agent_state.h"
#include "agent/syscall_dispatch.h"
#include "agent/thread_census.h"
#include "arch/runtime/raw_syscall.h"
#include "arch/runtime/safe_memory.h"
#include "core/landing_pads.h"

extern "C" void dprobe_optimized_hit(dprobe::arch::SavedRegs* regs, uint64_t address) noexcept;
extern "C" void dprobe_syscall_enter(dprobe::arch::SavedRegs* regs,
                                     const dprobe::arch::SyscallLinks* links) noexcept;
extern "C" void dprobe_syscall_exit(dprobe::arch::SavedRegs* regs,
                                    const dprobe::arch::SyscallLinks* links) noexcept;
extern "C" char dprobe_site_gadgets[];
extern "C" char dprobe_site_gadgets_end[];

namespace dprobe::agent {
namespace {

bool g_wanted = false;
bool g_registered = false;
const char* g_unavailable = nullptr;  // why nothing can be optimized

// Registration is per address space: a forked child (a followed one arms
// again) registers on its first use.
void sync_cores() {
  const long done =
      arch::raw_syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0);
  if (done != -EPERM) return;
  arch::raw_syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0);
  arch::raw_syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0);
}

Result<std::vector<uint64_t>, std::string> landing_pads_of(uint64_t begin, uint64_t end) {
  const auto tables = core::unwind_tables_for(begin);
  if (!tables) return std::vector<uint64_t>{};  // no unwind tables: nothing lands anywhere
  return core::landing_pads(*tables, begin, end);
}

}  // namespace

void set_optimization(bool wanted) {
  g_wanted = wanted;
  if (!wanted || g_registered || g_unavailable != nullptr) return;
  if (arch::raw_failed(arch::raw_syscall(SYS_membarrier,
                                         MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0))) {
    g_unavailable = "the kernel cannot serialize the cores (membarrier SYNC_CORE)";
    return;
  }
  g_registered = true;
  core::OptimizeEnv env;
  env.handler = reinterpret_cast<uint64_t>(&dprobe_optimized_hit);
  env.syscall_enter = reinterpret_cast<uint64_t>(&dprobe_syscall_enter);
  env.syscall_exit = reinterpret_cast<uint64_t>(&dprobe_syscall_exit);
  env.syscall_gadgets = reinterpret_cast<uint64_t>(dprobe_site_gadgets);
  env.syscall_gadgets_end = reinterpret_cast<uint64_t>(dprobe_site_gadgets_end);
  env.landing_pads = landing_pads_of;
  env.read_memory = [](uint64_t address, void* out, size_t size) {
    return arch::safe_read(out, address, size);
  };
  env.clear_threads = clear_threads;
  env.sync_cores = sync_cores;
  AgentState& state = agent_state();
  std::lock_guard lock(state.registry_writer);
  state.registry->enable_optimization(std::move(env));
}

void optimize_armed(uint64_t begin, uint64_t end) {
  // The breakpoints just written are in every core's instruction stream
  // before the CLI hears they are armed: the kernel's write cleaned the
  // caches, but on arm64 a core that does not pass a context
  // synchronization may run the old instruction for a while.
  sync_cores();
  if (!g_wanted || !g_registered) return;
  AgentState& state = agent_state();
  std::lock_guard lock(state.registry_writer);
  state.registry->optimize_range(begin, end);
}

namespace {

uint64_t monotonic_ms() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000 + static_cast<uint64_t>(now.tv_nsec) / 1000000;
}

// The schedule of tries, started over by each new request.
struct AgainSchedule {
  uint64_t request = 0;  // the registry's count when it was started
  uint64_t due_ms = 0;
  uint64_t interval_ms = 0;
  int tries_left = 0;
};
AgainSchedule g_again;
std::atomic<bool> g_again_restart{false};

}  // namespace

void restart_optimize_again() { g_again_restart.store(true); }

void optimize_again_when_due() {
  constexpr uint64_t kFirstMs = 100;
  constexpr uint64_t kLongestMs = 2000;
  constexpr int kTries = 10;
  // Held: attached, the thread that loaded the agent may not have gone on
  // (restart_optimize_again says when it has).
  if (!g_wanted || !g_registered || site_rewrites_held()) return;
  AgentState& state = agent_state();
  if (!state.registry) return;
  const uint64_t now = monotonic_ms();
  const uint64_t request = state.registry->optimize_again_requests();
  if (request != g_again.request || g_again_restart.exchange(false)) {
    g_again = {request, now + kFirstMs, kFirstMs, kTries};
  }
  if (g_again.tries_left == 0 || now < g_again.due_ms) return;
  std::lock_guard lock(state.registry_writer);
  sync_cores();
  const bool more = state.registry->optimize_again();
  g_again.interval_ms = std::min(g_again.interval_ms * 2, kLongestMs);
  g_again.due_ms = now + g_again.interval_ms;
  g_again.tries_left = more ? g_again.tries_left - 1 : 0;
}

std::vector<core::ProbeState> probe_states(uint64_t begin, uint64_t end) {
  AgentState& state = agent_state();
  std::vector<core::ProbeState> states;
  {
    std::lock_guard lock(state.registry_writer);
    states = state.registry->states(begin, end);
  }
  for (core::ProbeState& s : states) {
    if (!s.optimized && s.reason.empty()) {
      s.reason = !g_wanted                  ? "optimization is off (--no-optimize)"
                 : g_unavailable != nullptr ? g_unavailable
                                            : "not optimized";
    }
  }
  return states;
}

}  // namespace dprobe::agent
