// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/x86_64/emulate.h"

namespace dprobe::arch::x86_64 {
namespace {

constexpr uint64_t kCarryFlag = 1u << 0;
constexpr uint64_t kParityFlag = 1u << 2;
constexpr uint64_t kZeroFlag = 1u << 6;
constexpr uint64_t kSignFlag = 1u << 7;
constexpr uint64_t kOverflowFlag = 1u << 11;

constexpr uint8_t kAddressSizePrefix = 0x67;

bool is_set(uint64_t rflags, uint64_t flag) { return (rflags & flag) != 0; }

uint64_t next_ip(const Insn& insn) { return insn.address + insn.length; }

// Memory is little-endian whatever the host running the tests.
bool read_u64(MemoryAccess& memory, uint64_t address, uint64_t& value) {
  uint8_t bytes[8];
  if (!memory.read(address, bytes, sizeof(bytes))) return false;
  value = 0;
  for (unsigned i = 0; i < sizeof(bytes); ++i) value |= uint64_t{bytes[i]} << (8 * i);
  return true;
}

bool write_u64(MemoryAccess& memory, uint64_t address, uint64_t value) {
  uint8_t bytes[8];
  for (unsigned i = 0; i < sizeof(bytes); ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
  return memory.write(address, bytes, sizeof(bytes));
}

// loop*/jrcxz are prefixes, the opcode and a rel8: any 0x67 before the last
// two bytes makes the count ecx instead of rcx.
bool counts_in_ecx(const Insn& insn) {
  for (size_t i = 0; i + 2 < insn.length; ++i) {
    if (insn.bytes[i] == kAddressSizePrefix) return true;
  }
  return false;
}

bool valid_slot(int16_t slot) { return slot < static_cast<int16_t>(kRegCount); }

bool effective_address(const Insn& insn, const MemOperand& m, const SavedRegs& regs,
                       uint64_t& address) {
  if (!valid_slot(m.base) || !valid_slot(m.index)) return false;
  address = m.rip_relative ? next_ip(insn) : 0;
  if (m.base >= 0) address += regs.slot[m.base];
  if (m.index >= 0) address += regs.slot[m.index] * m.scale;
  address += static_cast<uint64_t>(m.disp);
  return true;
}

// The target of an indirect call/jmp, as read before anything is pushed.
bool indirect_target(const Insn& insn, const Classified& c, const SavedRegs& regs,
                     MemoryAccess& memory, uint64_t& target) {
  if (c.indirect_register) {
    if (c.indirect_reg >= kRegCount) return false;
    target = regs.slot[c.indirect_reg];
    return true;
  }
  uint64_t address;
  return effective_address(insn, c.indirect_mem, regs, address) &&
         read_u64(memory, address, target);
}

EmulateStatus call(const Insn& insn, uint64_t target, SavedRegs& regs, MemoryAccess& memory) {
  const uint64_t sp = regs.slot[kSp] - 8;
  if (!write_u64(memory, sp, next_ip(insn))) return EmulateStatus::kFault;
  regs.slot[kSp] = sp;
  regs.slot[kIp] = target;
  return EmulateStatus::kOk;
}

EmulateStatus ret(const Classified& c, SavedRegs& regs, MemoryAccess& memory) {
  uint64_t target;
  if (!read_u64(memory, regs.slot[kSp], target)) return EmulateStatus::kFault;
  regs.slot[kSp] += 8 + uint64_t{c.pop_bytes};
  regs.slot[kIp] = target;
  return EmulateStatus::kOk;
}

EmulateStatus jump_if(bool taken, const Insn& insn, uint64_t target, SavedRegs& regs) {
  regs.slot[kIp] = taken ? target : next_ip(insn);
  return EmulateStatus::kOk;
}

// A 32-bit count is written as ecx, which zeroes the upper half of rcx.
EmulateStatus loop(const Insn& insn, const Classified& c, SavedRegs& regs) {
  uint64_t count = regs.slot[kCx] - 1;
  if (counts_in_ecx(insn)) count &= 0xffffffffu;
  regs.slot[kCx] = count;
  const bool zf = is_set(regs.slot[kFlags], kZeroFlag);
  bool taken = count != 0;
  if (c.branch == Branch::kLoope) taken = taken && zf;
  if (c.branch == Branch::kLoopne) taken = taken && !zf;
  return jump_if(taken, insn, c.target, regs);
}

EmulateStatus jrcxz(const Insn& insn, const Classified& c, SavedRegs& regs) {
  uint64_t count = regs.slot[kCx];
  if (counts_in_ecx(insn)) count &= 0xffffffffu;
  return jump_if(count == 0, insn, c.target, regs);
}

EmulateStatus indirect(const Insn& insn, const Classified& c, SavedRegs& regs,
                       MemoryAccess& memory) {
  uint64_t target;
  if (!indirect_target(insn, c, regs, memory, target)) return EmulateStatus::kFault;
  if (c.branch == Branch::kCallIndirect) return call(insn, target, regs, memory);
  regs.slot[kIp] = target;
  return EmulateStatus::kOk;
}

}  // namespace

bool condition_holds(uint8_t cond, uint64_t rflags) {
  const bool sf_ne_of = is_set(rflags, kSignFlag) != is_set(rflags, kOverflowFlag);
  bool holds = false;
  switch ((cond >> 1) & 7) {  // the low bit negates
    case 0:
      holds = is_set(rflags, kOverflowFlag);
      break;
    case 1:
      holds = is_set(rflags, kCarryFlag);
      break;
    case 2:
      holds = is_set(rflags, kZeroFlag);
      break;
    case 3:
      holds = is_set(rflags, kCarryFlag) || is_set(rflags, kZeroFlag);
      break;
    case 4:
      holds = is_set(rflags, kSignFlag);
      break;
    case 5:
      holds = is_set(rflags, kParityFlag);
      break;
    case 6:
      holds = sf_ne_of;
      break;
    default:
      holds = sf_ne_of || is_set(rflags, kZeroFlag);
      break;
  }
  return (cond & 1) != 0 ? !holds : holds;
}

EmulateStatus emulate_insn(const Insn& insn, const Classified& c, SavedRegs& regs,
                           MemoryAccess& memory) {
  if (c.cls != InsnClass::kEmulate) return EmulateStatus::kFault;
  switch (c.branch) {
    case Branch::kCallRel:
      return call(insn, c.target, regs, memory);
    case Branch::kJmpRel:
      return jump_if(true, insn, c.target, regs);
    case Branch::kJcc:
      return jump_if(condition_holds(c.cond, regs.slot[kFlags]), insn, c.target, regs);
    case Branch::kLoop:
    case Branch::kLoope:
    case Branch::kLoopne:
      return loop(insn, c, regs);
    case Branch::kJrcxz:
      return jrcxz(insn, c, regs);
    case Branch::kRet:
      return ret(c, regs, memory);
    case Branch::kCallIndirect:
    case Branch::kJmpIndirect:
      return indirect(insn, c, regs, memory);
    case Branch::kNone:
      break;
  }
  return EmulateStatus::kFault;
}

}  // namespace dprobe::arch::x86_64
