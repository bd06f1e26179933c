// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/x86_64/classify.h"

#include <span>

#include "arch/x86_64/regs.h"
#include "arch/x86_64/zydis_decode.h"

namespace dprobe::arch::x86_64 {
namespace {

struct RejectedMnemonic {
  ZydisMnemonic mnemonic;
  const char* reason;
};

// Instructions refused whatever their operands, and why.
constexpr RejectedMnemonic kRejected[] = {
    {ZYDIS_MNEMONIC_INT3, "int3: another breakpoint is already there"},
    {ZYDIS_MNEMONIC_INT, "int n: a software interrupt; its handler would see the slot's address"},
    {ZYDIS_MNEMONIC_INTO, "into: an overflow trap; its handler would see the slot's address"},
    {ZYDIS_MNEMONIC_INT1, "int1 (icebp): a debug trap; its handler would see the slot's address"},
    {ZYDIS_MNEMONIC_HLT, "hlt: privileged, faults in user mode"},
    {ZYDIS_MNEMONIC_IN, "in: port I/O needs I/O privilege"},
    {ZYDIS_MNEMONIC_INSB, "ins: port I/O needs I/O privilege"},
    {ZYDIS_MNEMONIC_INSW, "ins: port I/O needs I/O privilege"},
    {ZYDIS_MNEMONIC_INSD, "ins: port I/O needs I/O privilege"},
    {ZYDIS_MNEMONIC_OUT, "out: port I/O needs I/O privilege"},
    {ZYDIS_MNEMONIC_OUTSB, "outs: port I/O needs I/O privilege"},
    {ZYDIS_MNEMONIC_OUTSW, "outs: port I/O needs I/O privilege"},
    {ZYDIS_MNEMONIC_OUTSD, "outs: port I/O needs I/O privilege"},
    {ZYDIS_MNEMONIC_CLI, "cli: changing the interrupt flag needs I/O privilege"},
    {ZYDIS_MNEMONIC_STI, "sti: changing the interrupt flag needs I/O privilege"},
    {ZYDIS_MNEMONIC_LGDT, "lgdt: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_LIDT, "lidt: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_LLDT, "lldt: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_LTR, "ltr: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_INVD, "invd: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_WBINVD, "wbinvd: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_RDMSR, "rdmsr: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_WRMSR, "wrmsr: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_SWAPGS, "swapgs: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_SYSRET, "sysret: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_SYSEXIT, "sysexit: privileged system instruction, faults in user mode"},
    {ZYDIS_MNEMONIC_IRET, "iret: an interrupt return reloads cs and flags from the stack"},
    {ZYDIS_MNEMONIC_IRETD, "iretd: an interrupt return reloads cs and flags from the stack"},
    {ZYDIS_MNEMONIC_IRETQ, "iretq: an interrupt return reloads cs and flags from the stack"},
    {ZYDIS_MNEMONIC_XBEGIN, "xbegin: a transaction cannot survive the breakpoint trap"},
    {ZYDIS_MNEMONIC_XEND, "xend: a transaction cannot survive the breakpoint trap"},
    {ZYDIS_MNEMONIC_XABORT, "xabort: a transaction cannot survive the breakpoint trap"},
    {ZYDIS_MNEMONIC_UD0, "ud0: undefined instruction, raises SIGILL on purpose"},
    {ZYDIS_MNEMONIC_UD1, "ud1: undefined instruction, raises SIGILL on purpose"},
    {ZYDIS_MNEMONIC_UD2, "ud2: undefined instruction, raises SIGILL on purpose"},
};

constexpr const char* kInvalid = "invalid or undefined encoding";
constexpr const char* kControlOrDebug =
    "mov to/from a control or debug register: privileged, faults in user mode";
constexpr const char* kPrivileged = "privileged system instruction, faults in user mode";
constexpr const char* kFar = "far jmp/call/ret (ljmp/lcall/lret): changes the code segment";
constexpr const char* kSegmentBranch =
    "branch with an fs/gs segment override: the segment base is not in the saved registers";
constexpr const char* kOperandSize16 =
    "branch with an 0x66 operand-size prefix: 16-bit near branches are not supported";
constexpr const char* kAddressSize32 =
    "indirect branch with an 0x67 address-size prefix: 32-bit addressing is not supported";
constexpr const char* kOddBranch = "control transfer dprobe cannot emulate";
constexpr const char* kOddRegister = "indirect branch through a register dprobe cannot read";
constexpr const char* kRelativeOperand = "position-relative operand dprobe cannot relocate";

// Zydis numbers rax..r15 in hardware order; regs.h has the kernel's order.
constexpr Reg kGprSlot[16] = {kAx, kCx, kDx,  kBx,  kSp,  kBp,  kSi,  kDi,
                              kR8, kR9, kR10, kR11, kR12, kR13, kR14, kR15};

int16_t gpr_slot(ZydisRegister reg) {
  if (reg < ZYDIS_REGISTER_RAX || reg > ZYDIS_REGISTER_R15) return -1;
  return static_cast<int16_t>(kGprSlot[reg - ZYDIS_REGISTER_RAX]);
}

Classified reject(const char* reason) {
  Classified c;
  c.reason = reason;
  return c;
}

bool has_prefix(const ZydisDecodedInstruction& insn, uint8_t value) {
  for (size_t i = 0; i < insn.raw.prefix_count; ++i) {
    if (insn.raw.prefixes[i].value == value) return true;
  }
  return false;
}

std::span<const ZydisDecodedOperand> visible_operands(const ZydisDecoded& d) {
  return {d.operands, d.insn.operand_count_visible};
}

const char* rejected_mnemonic(const ZydisDecoded& d) {
  for (const auto& r : kRejected) {
    if (r.mnemonic == d.insn.mnemonic) return r.reason;
  }
  return nullptr;
}

bool is_control_or_debug(const ZydisDecodedOperand& op) {
  if (op.type != ZYDIS_OPERAND_TYPE_REGISTER) return false;
  ZydisRegisterClass cls = ZydisRegisterGetClass(op.reg.value);
  return cls == ZYDIS_REGCLASS_CONTROL || cls == ZYDIS_REGCLASS_DEBUG;
}

bool is_branch(const ZydisDecoded& d) {
  switch (d.insn.meta.category) {
    case ZYDIS_CATEGORY_CALL:
    case ZYDIS_CATEGORY_COND_BR:
    case ZYDIS_CATEGORY_UNCOND_BR:
    case ZYDIS_CATEGORY_RET:
      return true;
    default:
      return d.insn.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE;
  }
}

bool is_rip_relative(const ZydisDecodedOperand& op) {
  return op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.base == ZYDIS_REGISTER_RIP;
}

uint64_t next_address(const Insn& insn) { return insn.address + insn.length; }

// Notes the RIP-relative memory operand, if any: the slot must retarget it.
void note_rip_relative(const Insn& insn, const ZydisDecoded& d, Classified& c) {
  for (const auto& op : visible_operands(d)) {
    if (!is_rip_relative(op)) continue;
    c.rip_relative = true;
    c.disp_offset = d.insn.raw.disp.offset;
    c.rip_target = next_address(insn) + static_cast<uint64_t>(op.mem.disp.value);
    return;
  }
}

Classified relative_branch(const Insn& insn, const ZydisDecodedOperand& op, Branch branch) {
  Classified c;
  c.cls = InsnClass::kEmulate;
  c.branch = branch;
  c.target = next_address(insn) + static_cast<uint64_t>(op.imm.value.s);
  return c;
}

Classified indirect_branch(const Insn& insn, const ZydisDecoded& d, Branch branch) {
  const ZydisDecodedOperand& op = d.operands[0];
  Classified c;
  c.cls = InsnClass::kEmulate;
  c.branch = branch;
  if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
    int16_t slot = gpr_slot(op.reg.value);
    if (slot < 0) return reject(kOddRegister);
    c.indirect_register = true;
    c.indirect_reg = static_cast<uint16_t>(slot);
    return c;
  }
  if (op.type != ZYDIS_OPERAND_TYPE_MEMORY) return reject(kOddBranch);
  if (d.insn.address_width != 64) return reject(kAddressSize32);
  MemOperand& m = c.indirect_mem;
  m.rip_relative = op.mem.base == ZYDIS_REGISTER_RIP;
  m.base = m.rip_relative ? int16_t{-1} : gpr_slot(op.mem.base);
  m.index = gpr_slot(op.mem.index);
  m.scale = op.mem.index == ZYDIS_REGISTER_NONE ? 1 : op.mem.scale;
  m.disp = op.mem.disp.value;
  if ((m.base < 0 && op.mem.base != ZYDIS_REGISTER_NONE && !m.rip_relative) ||
      (m.index < 0 && op.mem.index != ZYDIS_REGISTER_NONE)) {
    return reject(kOddRegister);
  }
  note_rip_relative(insn, d, c);
  return c;
}

Classified call_or_jmp(const Insn& insn, const ZydisDecoded& d, Branch rel, Branch indirect) {
  const ZydisDecodedOperand& op = d.operands[0];
  if (op.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op.imm.is_relative) {
    return relative_branch(insn, op, rel);
  }
  return indirect_branch(insn, d, indirect);
}

// jcc is 0x70+cc (rel8) or 0x0f 0x80+cc (rel32); loop* and jrcxz are 0xe0..0xe3.
Classified conditional_branch(const Insn& insn, const ZydisDecoded& d) {
  const ZydisDecodedOperand& op = d.operands[0];
  const uint8_t opcode = d.insn.opcode;
  const bool one_byte_map = d.insn.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT;
  if ((one_byte_map && (opcode & 0xf0) == 0x70) ||
      (d.insn.opcode_map == ZYDIS_OPCODE_MAP_0F && (opcode & 0xf0) == 0x80)) {
    Classified c = relative_branch(insn, op, Branch::kJcc);
    c.cond = opcode & 0x0f;
    return c;
  }
  if (!one_byte_map) return reject(kOddBranch);
  switch (opcode) {
    case 0xe0:
      return relative_branch(insn, op, Branch::kLoopne);
    case 0xe1:
      return relative_branch(insn, op, Branch::kLoope);
    case 0xe2:
      return relative_branch(insn, op, Branch::kLoop);
    case 0xe3:
      return relative_branch(insn, op, Branch::kJrcxz);
    default:
      return reject(kOddBranch);
  }
}

Classified near_return(const ZydisDecoded& d) {
  Classified c;
  c.cls = InsnClass::kEmulate;
  c.branch = Branch::kRet;
  if (d.insn.operand_count_visible == 1) {
    c.pop_bytes = static_cast<uint16_t>(d.operands[0].imm.value.u);
  }
  return c;
}

Classified classify_branch(const Insn& insn, const ZydisDecoded& d) {
  if (d.insn.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR) return reject(kFar);
  if (has_prefix(d.insn, 0x64) || has_prefix(d.insn, 0x65)) return reject(kSegmentBranch);
  if (has_prefix(d.insn, 0x66)) return reject(kOperandSize16);
  switch (d.insn.mnemonic) {
    case ZYDIS_MNEMONIC_CALL:
      return call_or_jmp(insn, d, Branch::kCallRel, Branch::kCallIndirect);
    case ZYDIS_MNEMONIC_JMP:
      return call_or_jmp(insn, d, Branch::kJmpRel, Branch::kJmpIndirect);
    case ZYDIS_MNEMONIC_RET:
      return near_return(d);
    default:
      if (d.insn.meta.category != ZYDIS_CATEGORY_COND_BR) return reject(kOddBranch);
      return conditional_branch(insn, d);
  }
}

Classified classify_out_of_line(const Insn& insn, const ZydisDecoded& d) {
  for (const auto& op : visible_operands(d)) {
    if (is_control_or_debug(op)) return reject(kControlOrDebug);
    if (op.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op.imm.is_relative) {
      return reject(kRelativeOperand);
    }
  }
  if (d.insn.attributes & ZYDIS_ATTRIB_IS_PRIVILEGED) return reject(kPrivileged);
  Classified c;
  c.cls = InsnClass::kOutOfLine;
  note_rip_relative(insn, d, c);
  return c;
}

}  // namespace

Classified classify_insn(const Insn& insn) {
  ZydisDecoded d;
  std::span<const uint8_t> code(insn.bytes.data(), insn.length);
  if (decode_zydis(code, d) != kZydisOk || d.insn.length != insn.length) return reject(kInvalid);
  if (const char* reason = rejected_mnemonic(d)) return reject(reason);
  if (is_branch(d)) return classify_branch(insn, d);
  return classify_out_of_line(insn, d);
}

}  // namespace dprobe::arch::x86_64
