// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/arm64/probe.h"

#include <algorithm>
#include <cstdio>

#include "arch/arm64/encode.h"
#include "arch/arm64/simulate.h"

namespace dprobe::arch::arm64 {
namespace {

using encode::put_word;

uint32_t word_at(std::span<const uint8_t> code, size_t at) {
  return uint32_t{code[at]} | uint32_t{code[at + 1]} << 8 | uint32_t{code[at + 2]} << 16 |
         uint32_t{code[at + 3]} << 24;
}

std::string hex_word(uint64_t address, uint32_t word) {
  char text[48];
  std::snprintf(text, sizeof(text), "0x%llx: %08x", static_cast<unsigned long long>(address), word);
  return text;
}

bool is_literal_load(const Decoded& d) {
  return d.op == Op::kLdrLiteral || d.op == Op::kLdrswLiteral;
}

// LDR Xt, [pc + 16]; then the load the literal instruction makes, from
// [Xt] with the same size and extension.
size_t write_literal_slot(const ProbeInsn& insn, uint64_t slot, std::span<uint8_t> out) {
  const uint32_t rt = insn.decoded.reg;
  const uint64_t literal = insn.address + static_cast<uint64_t>(insn.decoded.offset);
  put_word(out, 0, encode::ldr_literal_x(rt, 16));  // LDR Xt, slot + 16
  put_word(out, 4, literal_load_from(insn.decoded, rt));
  put_word(out, 8, encode::b(slot + 8, insn.address + kInsnBytes));
  put_word(out, 12, encode::kNop);  // the literal below stays 8-byte aligned
  encode::put_quad(out, 16, literal);
  return 24;
}

}  // namespace

uint32_t literal_load_from(const Decoded& d, uint32_t rn) {
  if (d.op == Op::kLdrswLiteral) return encode::ldrsw_base(d.reg, rn);
  return d.wide ? encode::ldr_x_base(d.reg, rn) : encode::ldr_w_base(d.reg, rn);
}

Result<ProbeInsn, Refusal> prepare_probe(std::span<const uint8_t> code, uint64_t code_address,
                                         uint64_t probe_address) {
  if (probe_address < code_address || probe_address - code_address + kInsnBytes > code.size()) {
    return unexpected(Refusal{ArmStatus::kNotBoundary, "probe outside the code given"});
  }
  const uint64_t at = probe_address - code_address;
  if (probe_address % kInsnBytes != 0 || code_address % kInsnBytes != 0) {
    // The instruction the address is inside of, marked as x86_64's
    // listing marks it.
    const uint64_t start = at - at % kInsnBytes;
    char offset[24];
    std::snprintf(offset, sizeof(offset), "0x%llx",
                  static_cast<unsigned long long>(at % kInsnBytes));
    return unexpected(
        Refusal{ArmStatus::kNotBoundary, "the address is inside an instruction (EILSEQ):\n> " +
                                             hex_word(code_address + start, word_at(code, start)) +
                                             "  <- probe at +" + offset});
  }
  ProbeInsn insn{probe_address, word_at(code, at), {}};
  insn.decoded = decode_insn(insn.word);
  const std::string where = hex_word(insn.address, insn.word);
  if (!can_probe(insn.decoded)) {
    return unexpected(Refusal{ArmStatus::kRejected, where + ": " + insn.decoded.reason});
  }
  if (is_literal_load(insn.decoded) && insn.decoded.reg == 31) {
    // Its slot could not reproduce a fault: register 31 is sp as a base.
    return unexpected(Refusal{ArmStatus::kRejected, where + ": a literal load into xzr"});
  }
  uint32_t preceding[kExclusiveScanWords];
  const size_t count = std::min<size_t>(at / kInsnBytes, kExclusiveScanWords);
  for (size_t i = 0; i < count; ++i) {
    preceding[i] = word_at(code, at - (count - i) * kInsnBytes);
  }
  if (in_exclusive_sequence({preceding, count})) {
    return unexpected(
        Refusal{ArmStatus::kRejected,
                where + ": inside a load/store-exclusive sequence (a trap there clears the "
                        "exclusive monitor and the loop would never succeed)"});
  }
  return insn;
}

Result<size_t, std::string> write_slot(const ProbeInsn& insn, uint64_t slot_address,
                                       std::span<uint8_t> out) {
  if (out.size() < kSlotBytes) return unexpected(std::string("slot buffer too small"));
  if (slot_address % kInsnBytes != 0) return unexpected(std::string("misaligned slot"));
  const uint64_t next = insn.address + kInsnBytes;
  if (!encode::within_b_reach(slot_address + 8, next) ||
      !encode::within_b_reach(slot_address, next)) {
    return unexpected(std::string("the slot is out of a branch's reach of the probe"));
  }
  if (insn.decoded.cls == InsnClass::kOutOfLine) {
    put_word(out, 0, insn.word);
    put_word(out, 4, encode::b(slot_address + 4, next));
    return 8;
  }
  if (is_literal_load(insn.decoded)) return write_literal_slot(insn, slot_address, out);
  put_word(out, 0, encode::b(slot_address, next));
  return 4;
}

void resume_after_hit(const ProbeInsn& insn, uint64_t slot_address, SavedRegs& regs,
                      MemoryAccess& memory) noexcept {
  if (insn.decoded.cls == InsnClass::kSimulate) {
    regs.slot[kPc] = insn.address;
    if (simulate(insn.decoded, regs, memory) == SimulateStatus::kOk) return;
  }
  regs.slot[kPc] = slot_address;
}

}  // namespace dprobe::arch::arm64
