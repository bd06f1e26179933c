// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/syscall_site_plan.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>

#include <vector>

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

}  // namespace

std::optional<core::ProbeSite> rewrite_site_for(uint64_t syscall_at) {
  if (in_vdso(syscall_at)) return std::nullopt;
  const auto tables = core::unwind_tables_for(syscall_at);
  if (!tables) return std::nullopt;
  const auto extent = core::function_extent(*tables, syscall_at);
  if (!extent || extent->size == 0 || extent->size > (1u << 20)) return std::nullopt;
  std::vector<uint8_t> code(extent->size);
  if (!arch::safe_read(code.data(), extent->begin, code.size())) return std::nullopt;
  const auto plan = arch::plan_syscall_rewrite(code, extent->begin, syscall_at, {});
  if (!plan) return std::nullopt;
  return core::ProbeSite{arch::displaced_address(*plan), extent->begin, extent->size};
}

}  // namespace dprobe::agent
