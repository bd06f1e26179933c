// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/syscall_sites.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "agent/agent_state.h"
#include "agent/jump_optimizer.h"
#include "agent/syscall_dispatch.h"
#include "arch/probe_insn.h"
#include "arch/runtime/safe_memory.h"
#include "core/landing_pads.h"

namespace dprobe::agent {
namespace {

// The vDSO's text is the kernel's to give: never written.
bool in_vdso(uint64_t address) {
  const uint64_t base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return false;
  const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(base);
  const auto* segments = reinterpret_cast<const ElfW(Phdr)*>(base + header->e_phoff);
  for (int i = 0; i < header->e_phnum; ++i) {
    if (segments[i].p_type != PT_LOAD) continue;
    // The vDSO is linked at 0: its segments' addresses are offsets from base.
    if (address - (base + segments[i].p_vaddr) < segments[i].p_memsz) return true;
  }
  return false;
}

// Where the instructions to replace start, for the syscall at `site`: the
// plan over the function as memory has it now (the registry plans again
// over the original bytes, and refuses if they start elsewhere).
struct Candidate {
  core::ProbeSite site;
  uint64_t syscall_at = 0;
};

std::optional<Candidate> candidate_for(uint64_t syscall_at) {
  if (in_vdso(syscall_at)) return std::nullopt;
  const auto tables = core::unwind_tables_for(syscall_at);
  if (!tables) return std::nullopt;
  const auto extent = core::function_extent(*tables, syscall_at);
  if (!extent || extent->size == 0 || extent->size > (1u << 20)) return std::nullopt;
  std::vector<uint8_t> code(extent->size);
  if (!arch::safe_read(code.data(), extent->begin, code.size())) return std::nullopt;
  const auto plan = arch::plan_syscall_rewrite(code, extent->begin, syscall_at, {});
  if (!plan) return std::nullopt;
  return Candidate{{arch::displaced_address(*plan), extent->begin, extent->size}, syscall_at};
}

}  // namespace

void rewrite_syscall_sites() {
  if (site_rewrites_held()) return;
  const std::vector<uint64_t> sites = take_queued_sites();
  if (sites.empty() || !syscall_tracing_configured()) return;  // none, or the session is over
  AgentState& state = agent_state();
  if (!state.registry) return;
  uint64_t low = UINT64_MAX;
  uint64_t high = 0;
  for (const uint64_t syscall_at : sites) {
    const std::optional<Candidate> candidate = candidate_for(syscall_at);
    if (!candidate) continue;
    std::lock_guard lock(state.registry_writer);
    if (state.registry->add_syscall_site(candidate->site, candidate->syscall_at)) {
      low = std::min(low, candidate->site.address);
      high = std::max(high, candidate->site.address + 1);
    }
  }
  if (low < high) optimize_armed(low, high);
}

}  // namespace dprobe::agent
