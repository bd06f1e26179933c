// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The engine's arch operations (arch/probe_insn.h) on an arm64 host: the
// probe layer of arch/arm64/probe.h and the branch optimization of
// arch/arm64/optimize.h.
#include "arch/probe_insn.h"

namespace dprobe::arch {
namespace {

constexpr uint8_t kBreakpoint[] = {static_cast<uint8_t>(arm64::kBreakpointWord),
                                   static_cast<uint8_t>(arm64::kBreakpointWord >> 8),
                                   static_cast<uint8_t>(arm64::kBreakpointWord >> 16),
                                   static_cast<uint8_t>(arm64::kBreakpointWord >> 24)};

}  // namespace

Result<ProbeInsn, Refusal> prepare_insn(std::span<const uint8_t> code, uint64_t code_address,
                                        uint64_t probe_address) {
  return arm64::prepare_probe(code, code_address, probe_address);
}

Result<size_t, std::string> write_slot(const ProbeInsn& insn, uint64_t slot_address,
                                       std::span<uint8_t> out) {
  return arm64::write_slot(insn, slot_address, out);
}

std::span<const uint8_t> breakpoint_insn() { return kBreakpoint; }

bool is_breakpoint_insn(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4) return false;
  const uint32_t word = uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 | uint32_t{bytes[2]} << 16 |
                        uint32_t{bytes[3]} << 24;
  return (word & 0xffe0001fu) == 0xd4200000u;  // BRK #imm16
}

// BRK reports its own address.
uint64_t probe_address_of_trap(uint64_t trap_pc) { return trap_pc; }

void resume_after_hit(const ProbeInsn& insn, uint64_t slot_address, SavedRegs& regs,
                      MemoryAccess& memory) noexcept {
  arm64::resume_after_hit(insn, slot_address, regs, memory);
}

// ---- Branch-optimized probes (arch/arm64/optimize.h).

Result<OptimizePlan, std::string> plan_optimization(std::span<const uint8_t> code,
                                                    uint64_t function_address,
                                                    uint64_t probe_address,
                                                    std::span<const uint64_t>, const ReadMemory&) {
  // One instruction is replaced: no landing pad or branch can be inside it.
  auto insn = arm64::prepare_probe(code, function_address, probe_address);
  if (!insn) return unexpected(std::move(insn.error().message));
  return arm64::can_optimize(*insn);
}

Result<std::vector<uint64_t>, std::string> code_targets(std::span<const uint8_t>, uint64_t) {
  return std::vector<uint64_t>{};
}

size_t displaced_length(const OptimizePlan&) { return arm64::kInsnBytes; }
std::vector<uint8_t> displaced_bytes(const OptimizePlan& plan) {
  const auto bytes = insn_bytes(plan.insn);
  return {bytes.begin(), bytes.end()};
}
uint64_t displaced_address(const OptimizePlan& plan) { return plan.insn.address; }

Result<size_t, std::string> write_trampoline(const OptimizePlan& plan, uint64_t address,
                                             uint64_t handler, uint64_t cookie,
                                             std::span<uint8_t> out) {
  return arm64::write_trampoline(plan, {address, handler, cookie}, out);
}

uint64_t trampoline_copy_address(const OptimizePlan&, uint64_t trampoline, uint64_t) {
  return trampoline + arm64::displaced_copy_offset();
}

std::vector<uint8_t> site_jump_bytes(uint64_t site, uint64_t trampoline, size_t) {
  const uint32_t word = arm64::site_branch(site, trampoline);
  return {static_cast<uint8_t>(word), static_cast<uint8_t>(word >> 8),
          static_cast<uint8_t>(word >> 16), static_cast<uint8_t>(word >> 24)};
}

std::vector<uint8_t> detour_jump(uint64_t target) {
  constexpr uint32_t kLoadX16Ahead8 = 0x58000050;  // ldr x16, #8
  constexpr uint32_t kBranchX16 = 0xd61f0200;      // br x16
  std::vector<uint8_t> bytes;
  for (const uint32_t word : {kLoadX16Ahead8, kBranchX16}) {
    for (int shift = 0; shift < 32; shift += 8)
      bytes.push_back(static_cast<uint8_t>(word >> shift));
  }
  for (int shift = 0; shift < 64; shift += 8)
    bytes.push_back(static_cast<uint8_t>(target >> shift));
  return bytes;
}

// ---- System call sites are not rewritten on arm64: Debian 12's arm64
// kernel has no Syscall User Dispatch to find them by, and svc is not
// relocated. Every plan is refused; without one nothing below is called.

namespace {

constexpr const char* kNoSiteRewrite = "system call sites are not rewritten on arm64";

}  // namespace

Result<OptimizePlan, std::string> plan_syscall_rewrite(std::span<const uint8_t>, uint64_t, uint64_t,
                                                       std::span<const uint64_t>,
                                                       const ReadMemory&) {
  return unexpected(std::string(kNoSiteRewrite));
}

Result<size_t, std::string> write_syscall_trampoline(const OptimizePlan&, uint64_t, uint64_t,
                                                     uint64_t, uint64_t, uint64_t,
                                                     std::span<uint8_t>, std::span<uint8_t>) {
  return unexpected(std::string(kNoSiteRewrite));
}

uint64_t syscall_trampoline_copy_address(const OptimizePlan&, uint64_t, uint64_t pc) { return pc; }

}  // namespace dprobe::arch
