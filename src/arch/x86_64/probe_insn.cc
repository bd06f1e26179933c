// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/probe_insn.h"

#include <algorithm>
#include <iterator>

#include "arch/x86_64/slot.h"

namespace dprobe::arch {
namespace {

constexpr uint8_t kInt3[] = {0xcc};

}  // namespace

Result<ProbeInsn, Refusal> prepare_insn(std::span<const uint8_t> code, uint64_t code_address,
                                        uint64_t probe_address) {
  if (probe_address < code_address || probe_address - code_address >= code.size()) {
    return unexpected(Refusal{ArmStatus::kNotBoundary, "probe outside the code given"});
  }
  if (auto boundary = x86_64::check_boundary(code, code_address, probe_address); !boundary) {
    return unexpected(
        Refusal{ArmStatus::kNotBoundary,
                "the address is inside an instruction (EILSEQ):\n" + boundary.error().listing()});
  }
  auto insn = x86_64::decode_insn(code.subspan(probe_address - code_address), probe_address);
  if (!insn) return unexpected(Refusal{ArmStatus::kNotBoundary, insn.error()});
  ProbeInsn probe{*insn, x86_64::classify_insn(*insn)};
  if (!x86_64::can_probe(probe.cls)) {
    return unexpected(
        Refusal{ArmStatus::kRejected, x86_64::disassemble(*insn) + ": " + probe.cls.reason});
  }
  return probe;
}

Result<size_t, std::string> write_slot(const ProbeInsn& insn, uint64_t slot_address,
                                       std::span<uint8_t> out) {
  if (insn.cls.branch == x86_64::Branch::kCallRel) {
    // Its emulation faults only when the return address cannot be pushed:
    // a push faults the same way, here, where the program gets the signal.
    constexpr uint8_t kPushThenTrap[] = {0x50, 0xcc};  // push rax; int3
    if (out.size() < sizeof(kPushThenTrap)) return unexpected(std::string("slot buffer too small"));
    std::copy(std::begin(kPushThenTrap), std::end(kPushThenTrap), out.begin());
    return sizeof(kPushThenTrap);
  }
  // Other emulated branches run their slot only when reading their target
  // faults (ret, call/jmp through memory): a copy faults at the same operand.
  x86_64::Classified as_copy = insn.cls;
  as_copy.cls = x86_64::InsnClass::kOutOfLine;
  return x86_64::write_out_of_line_slot(insn.insn, as_copy, slot_address, out);
}

std::span<const uint8_t> breakpoint_insn() { return kInt3; }

bool is_breakpoint_insn(std::span<const uint8_t> bytes) {
  return !bytes.empty() && bytes[0] == kInt3[0];
}

uint64_t probe_address_of_trap(uint64_t trap_pc) { return trap_pc - 1; }

void resume_after_hit(const ProbeInsn& insn, uint64_t slot_address, SavedRegs& regs,
                      MemoryAccess& memory) noexcept {
  if (insn.cls.cls == x86_64::InsnClass::kEmulate) {
    regs.slot[x86_64::kIp] = insn.insn.address;
    if (x86_64::emulate_insn(insn.insn, insn.cls, regs, memory) == x86_64::EmulateStatus::kOk) {
      return;
    }
  }
  regs.slot[x86_64::kIp] = slot_address;
}

}  // namespace dprobe::arch
