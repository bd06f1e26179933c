// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/arm64/simulate.h"

namespace dprobe::arch::arm64 {
namespace {

constexpr uint8_t kZeroRegister = 31;
constexpr uint64_t kInsnBytes = 4;
constexpr uint64_t kPageMask = ~uint64_t{0xfff};

bool is_set(uint64_t pstate, uint64_t flag) { return (pstate & flag) != 0; }

// Register 31 is the zero register for every operand simulated here (never
// sp): reads give 0, writes vanish.
uint64_t read_x(const SavedRegs& regs, uint8_t reg) {
  return reg == kZeroRegister ? 0 : regs.slot[reg];
}

uint64_t read_operand(const SavedRegs& regs, uint8_t reg, bool wide) {
  const uint64_t value = read_x(regs, reg);
  return wide ? value : value & 0xffffffffu;
}

void write_x(SavedRegs& regs, uint8_t reg, uint64_t value) {
  if (reg != kZeroRegister) regs.slot[reg] = value;
}

uint64_t pc_plus(const SavedRegs& regs, int64_t offset) {
  return regs.slot[kPc] + static_cast<uint64_t>(offset);
}

SimulateStatus branch_if(bool taken, const Decoded& d, SavedRegs& regs) {
  regs.slot[kPc] = pc_plus(regs, taken ? d.offset : int64_t{kInsnBytes});
  return SimulateStatus::kOk;
}

SimulateStatus set_and_step(SavedRegs& regs, uint8_t reg, uint64_t value) {
  write_x(regs, reg, value);
  regs.slot[kPc] += kInsnBytes;
  return SimulateStatus::kOk;
}

// Memory is little-endian whatever the host running the tests.
bool read_le(MemoryAccess& memory, uint64_t address, uint8_t size, uint64_t& value) {
  uint8_t bytes[8];
  if (size > sizeof(bytes) || !memory.read(address, bytes, size)) return false;
  value = 0;
  for (unsigned i = 0; i < size; ++i) value |= uint64_t{bytes[i]} << (8 * i);
  return true;
}

// A 4-byte LDR zero-extends into Xt; LDRSW sign-extends.
SimulateStatus load_literal(const Decoded& d, SavedRegs& regs, MemoryAccess& memory) {
  uint64_t value;
  if (!read_le(memory, pc_plus(regs, d.offset), d.load_bytes, value)) {
    return SimulateStatus::kFault;
  }
  if (d.op == Op::kLdrswLiteral) {
    value = static_cast<uint64_t>(int64_t{static_cast<int32_t>(static_cast<uint32_t>(value))});
  }
  return set_and_step(regs, d.reg, value);
}

// The target is read before x30 is written: BLR x30 branches to the old
// x30.
SimulateStatus branch_register(const Decoded& d, SavedRegs& regs) {
  const uint64_t target = read_x(regs, d.reg);
  if (d.op == Op::kBlr) regs.slot[kLr] = regs.slot[kPc] + kInsnBytes;
  regs.slot[kPc] = target;
  return SimulateStatus::kOk;
}

SimulateStatus branch_and_link(const Decoded& d, SavedRegs& regs) {
  regs.slot[kLr] = regs.slot[kPc] + kInsnBytes;
  return branch_if(true, d, regs);
}

bool test_bit(const Decoded& d, const SavedRegs& regs) {
  return ((read_x(regs, d.reg) >> (d.bit & 63)) & 1) != 0;
}

}  // namespace

bool condition_holds(uint8_t cond, uint64_t pstate) {
  const bool n = is_set(pstate, kFlagN);
  const bool z = is_set(pstate, kFlagZ);
  const bool c = is_set(pstate, kFlagC);
  const bool v = is_set(pstate, kFlagV);
  bool holds = true;
  switch ((cond >> 1) & 7) {  // the low bit negates, but for 1111 (nv)
    case 0:
      holds = z;
      break;
    case 1:
      holds = c;
      break;
    case 2:
      holds = n;
      break;
    case 3:
      holds = v;
      break;
    case 4:
      holds = c && !z;
      break;
    case 5:
      holds = n == v;
      break;
    case 6:
      holds = n == v && !z;
      break;
    default:
      return true;  // al, nv
  }
  return (cond & 1) != 0 ? !holds : holds;
}

SimulateStatus simulate(const Decoded& d, SavedRegs& regs, MemoryAccess& memory) {
  if (d.cls != InsnClass::kSimulate || d.reg > kZeroRegister) return SimulateStatus::kNotSimulated;
  switch (d.op) {
    case Op::kB:
      return branch_if(true, d, regs);
    case Op::kBl:
      return branch_and_link(d, regs);
    case Op::kBCond:
      return branch_if(condition_holds(d.cond, regs.slot[kPstate]), d, regs);
    case Op::kCbz:
    case Op::kCbnz:
      return branch_if((read_operand(regs, d.reg, d.wide) == 0) == (d.op == Op::kCbz), d, regs);
    case Op::kTbz:
    case Op::kTbnz:
      return branch_if(test_bit(d, regs) == (d.op == Op::kTbnz), d, regs);
    case Op::kAdr:
      return set_and_step(regs, d.reg, pc_plus(regs, d.offset));
    case Op::kAdrp:
      return set_and_step(regs, d.reg,
                          (regs.slot[kPc] & kPageMask) + static_cast<uint64_t>(d.offset));
    case Op::kLdrLiteral:
    case Op::kLdrswLiteral:
      return load_literal(d, regs, memory);
    case Op::kPrfmLiteral:
      regs.slot[kPc] += kInsnBytes;
      return SimulateStatus::kOk;
    case Op::kBr:
    case Op::kBlr:
    case Op::kRet:
      return branch_register(d, regs);
    case Op::kNone:
      break;
  }
  return SimulateStatus::kNotSimulated;
}

}  // namespace dprobe::arch::arm64
