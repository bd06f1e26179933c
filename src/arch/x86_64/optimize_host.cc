// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The engine's jump-optimization operations (arch/probe_insn.h) for x86_64.
#include <cpuid.h>

#include "arch/probe_insn.h"

namespace dprobe::arch {

bool x86_64::host_has_sahf() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(0x80000001, &a, &b, &c, &d) != 0 && (c & 1u) != 0;
}

Result<OptimizePlan, std::string> plan_optimization(std::span<const uint8_t> code,
                                                    uint64_t function_address,
                                                    uint64_t probe_address,
                                                    std::span<const uint64_t> landing_pads,
                                                    const ReadMemory& read) {
  return x86_64::can_optimize(code, function_address, probe_address, landing_pads, read);
}

Result<std::vector<uint64_t>, std::string> code_targets(std::span<const uint8_t> code,
                                                        uint64_t address) {
  return x86_64::code_targets(code, address);
}

size_t displaced_length(const OptimizePlan& plan) { return plan.displaced_length; }

Result<OptimizePlan, std::string> plan_syscall_rewrite(std::span<const uint8_t> code,
                                                       uint64_t function_address,
                                                       uint64_t syscall_address,
                                                       std::span<const uint64_t> landing_pads,
                                                       const ReadMemory& read) {
  return x86_64::can_rewrite_syscall(code, function_address, syscall_address, landing_pads, read);
}

uint64_t displaced_address(const OptimizePlan& plan) { return plan.address; }

Result<size_t, std::string> write_syscall_trampoline(const OptimizePlan& plan, uint64_t address,
                                                     uint64_t enter, uint64_t exit, uint64_t site,
                                                     uint64_t gadget, std::span<uint8_t> out,
                                                     std::span<uint8_t> gadget_out) {
  static const bool sahf = x86_64::host_has_sahf();
  return x86_64::write_syscall_trampoline(plan, {address, enter, exit, site, gadget, sahf}, out,
                                          gadget_out);
}

uint64_t syscall_trampoline_copy_address(const OptimizePlan& plan, uint64_t trampoline,
                                         uint64_t pc) {
  return trampoline + (pc - plan.address);
}

std::vector<uint8_t> displaced_bytes(const OptimizePlan& plan) {
  std::vector<uint8_t> bytes;
  for (const x86_64::Insn& insn : plan.displaced) {
    bytes.insert(bytes.end(), insn.bytes.begin(), insn.bytes.begin() + insn.length);
  }
  return bytes;
}

Result<size_t, std::string> write_trampoline(const OptimizePlan& plan, uint64_t address,
                                             uint64_t handler, uint64_t cookie,
                                             std::span<uint8_t> out) {
  static const bool sahf = x86_64::host_has_sahf();
  return x86_64::write_trampoline(plan, {address, handler, cookie, sahf}, out);
}

uint64_t trampoline_copy_address(const OptimizePlan& plan, uint64_t trampoline, uint64_t pc) {
  return trampoline + x86_64::displaced_copy_offset() + (pc - plan.address);
}

std::vector<uint8_t> site_jump_bytes(uint64_t site, uint64_t trampoline, size_t length) {
  std::vector<uint8_t> bytes(length, breakpoint_insn()[0]);
  const auto jump = x86_64::site_jump(site, trampoline);
  std::copy(jump.begin(), jump.end(), bytes.begin());
  return bytes;
}

std::vector<uint8_t> detour_jump(uint64_t target) {
  std::vector<uint8_t> bytes = {0xff, 0x25, 0, 0, 0, 0};  // jmp *0(%rip)
  for (int shift = 0; shift < 64; shift += 8)
    bytes.push_back(static_cast<uint8_t>(target >> shift));
  return bytes;
}

}  // namespace dprobe::arch
