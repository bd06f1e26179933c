// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What to do with the instruction a breakpoint displaces (the kernel's
// arch_uprobe_analyze_insn): reject it, run a copy out of line in a slot
// (write_out_of_line_slot), or emulate it on the saved registers
// (emulate_insn) because its effect depends on where it runs.
//
//   Classified c = classify_insn(insn);
//   if (!can_probe(c)) return error(c.reason);
//   if (c.cls == InsnClass::kOutOfLine) write_out_of_line_slot(insn, c, slot, out);
//
// Everything a hit needs is in Classified, so emulation never decodes.
#ifndef DPROBE_ARCH_X86_64_CLASSIFY_H_
#define DPROBE_ARCH_X86_64_CLASSIFY_H_

#include <cstdint>

#include "arch/x86_64/decoder.h"

namespace dprobe::arch::x86_64 {

enum class InsnClass : uint8_t { kReject, kOutOfLine, kEmulate };

enum class Branch : uint8_t {
  kNone,
  kCallRel,
  kJmpRel,
  kJcc,
  kLoop,
  kLoope,
  kLoopne,
  kJrcxz,  // and jecxz (0x67 prefix)
  kRet,
  kCallIndirect,
  kJmpIndirect,
};

// A memory operand: base + index * scale + disp, or next-rip + disp.
struct MemOperand {
  int16_t base = -1;   // Reg slot (regs.h), -1 for none
  int16_t index = -1;  // Reg slot, -1 for none
  uint8_t scale = 1;
  int64_t disp = 0;
  bool rip_relative = false;  // disp counts from the next instruction
};

struct Classified {
  InsnClass cls = InsnClass::kReject;
  // kReject: what and why, a static string; empty otherwise.
  const char* reason = "";
  Branch branch = Branch::kNone;
  uint64_t target = 0;     // relative branches: the absolute target
  uint8_t cond = 0;        // kJcc: the opcode's low 4 bits, the Intel cc
  uint16_t pop_bytes = 0;  // ret imm16
  // kCallIndirect, kJmpIndirect: the target is in a register, or in memory.
  bool indirect_register = false;
  uint16_t indirect_reg = 0;  // Reg slot
  MemOperand indirect_mem;
  // The instruction has a RIP-relative memory operand (whatever its class);
  // write_out_of_line_slot retargets its disp32.
  bool rip_relative = false;
  uint8_t disp_offset = 0;  // byte offset of the disp32 in the instruction
  uint64_t rip_target = 0;  // the absolute address the operand refers to
};

Classified classify_insn(const Insn& insn);

// Whether a breakpoint may go on the instruction (the kernel's can_probe
// answers the boundary question too; here check_boundary does).
inline bool can_probe(const Classified& c) { return c.cls != InsnClass::kReject; }

}  // namespace dprobe::arch::x86_64

#endif  // DPROBE_ARCH_X86_64_CLASSIFY_H_
