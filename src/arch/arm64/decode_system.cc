// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Exception generation and system instructions (word<31:24> = 11010100 and
// 11010101). The kernel refuses exceptions, MSR and the hints it has not
// vetted, because each does something a copy in a slot cannot reproduce
// or the probe handler cannot follow; decode.h lists where dprobe differs.
#include <cstdint>

#include "arch/arm64/decode_groups.h"

namespace dprobe::arch::arm64 {
namespace {

constexpr const char* kSvc = "svc: a system call out of line is not supported yet";
constexpr const char* kHypervisorCall = "hvc/smc: hypervisor or secure monitor call, EL1 and up";
constexpr const char* kBrk = "brk: a breakpoint (another probe's or a debugger's) is already there";
constexpr const char* kHlt = "hlt: a halting debug breakpoint, undefined without a debugger";
constexpr const char* kDcps = "dcps1/2/3: debug state instruction, undefined in user space";
constexpr const char* kTransaction =
    "transactional memory (tstart, tcommit, ttest, tcancel) is not supported";
constexpr const char* kWaitHint =
    "wait or event hint (yield, wfe, wfi, sev, sevl, dgh, wfet, wfit): the kernel's probes "
    "refuse it";
constexpr const char* kAuthHint =
    "aut* hint: a failed pointer authentication faults (FEAT_FPAC) at the slot's address";
constexpr const char* kOtherHint =
    "hint the kernel's probes refuse (esb, psb, tsb, csdb, clrbhb, chkfeat, ...)";
constexpr const char* kMsrImmediate = "msr (immediate): writes PSTATE fields";
constexpr const char* kMsr = "msr: writes a system register other than nzcv, fpcr, fpsr, tpidr_el0";
constexpr const char* kMrs = "mrs: reads a system register that is not the same out of line";
constexpr const char* kSystemPair = "msrr/mrrs/sysp: 128-bit system register moves";

// A system register as MSR/MRS encode it in word<20:5>:
// o0(op0 - 2):op1:CRn:CRm:op2, here with op0 whole.
constexpr uint32_t sysreg(uint32_t op0, uint32_t op1, uint32_t crn, uint32_t crm, uint32_t op2) {
  return ((op0 & 3) << 14) | (op1 << 11) | (crn << 7) | (crm << 3) | op2;
}

constexpr uint32_t kNzcv = sysreg(3, 3, 4, 2, 0);
constexpr uint32_t kFpcr = sysreg(3, 3, 4, 4, 0);
constexpr uint32_t kFpsr = sysreg(3, 3, 4, 4, 1);
constexpr uint32_t kTpidrEl0 = sysreg(3, 3, 13, 0, 2);
constexpr uint32_t kTpidrroEl0 = sysreg(3, 3, 13, 0, 3);
constexpr uint32_t kCntfrqEl0 = sysreg(3, 3, 14, 0, 0);
constexpr uint32_t kCntvctEl0 = sysreg(3, 3, 14, 0, 2);
constexpr uint32_t kCtrEl0 = sysreg(3, 3, 0, 0, 1);
constexpr uint32_t kDczidEl0 = sysreg(3, 3, 0, 0, 7);

// The registers a thread writes for itself; the slot leaves them as the
// program would.
bool msr_may_step(uint32_t reg) {
  return reg == kNzcv || reg == kFpcr || reg == kFpsr || reg == kTpidrEl0;
}

// The ID registers user space reads by trapping to the kernel, which
// emulates them (op0 = 3, op1 = 0, CRn = 0, CRm = 0 or 2..7; MIDR_EL1 is
// the first): the emulation steps past the copy in the slot as it would in
// place.
bool is_emulated_id_register(uint32_t reg) {
  const uint32_t crm = (reg >> 3) & 0xf;
  return (reg & ~uint32_t{0x7f}) == sysreg(3, 0, 0, 0, 0) && crm != 1 && crm <= 7;
}

bool mrs_may_step(uint32_t reg) {
  return msr_may_step(reg) || reg == kTpidrroEl0 || reg == kCntfrqEl0 || reg == kCntvctEl0 ||
         reg == kCtrEl0 || reg == kDczidEl0 || is_emulated_id_register(reg);
}

// The kernel's aarch64_insn_is_steppable_hint: NOP, XPACLRI, PACIA1716,
// PACIB1716, PACIAZ, PACIASP, PACIBZ, PACIBSP, BTI (any target kind).
Decoded decode_hint(uint32_t number) {
  switch (number) {
    case 0:
    case 7:
    case 8:
    case 10:
    case 24:
    case 25:
    case 26:
    case 27:
    case 32:
    case 34:
    case 36:
    case 38:
      return out_of_line();
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
      return reject(kWaitHint);
    case 12:
    case 14:
    case 28:
    case 29:
    case 30:
    case 31:
      return reject(kAuthHint);
    default:
      return reject(kOtherHint);
  }
}

// Barriers (CRn = 0011, op1 = 011): CLREX, DSB, DMB, ISB, SB, SSBB,
// PSSBB, DSB nXS step; op2 = 011 is TCOMMIT.
Decoded decode_barrier(uint32_t word) {
  const uint32_t op2 = field(word, 7, 5);
  if (op2 == 0b011) return reject(kTransaction);
  if (op2 == 0b000 || (op2 == 0b001 && field(word, 9, 8) != 0b10)) return reject(kUndefined);
  return out_of_line();
}

// PSTATE (CRn = 0100): CFINV, XAFLAG and AXFLAG (op1 = 000, op2 = 0..2)
// only rewrite NZCV; the rest is MSR (immediate).
Decoded decode_pstate(uint32_t word) {
  const bool flag_op =
      field(word, 18, 16) == 0 && field(word, 11, 8) == 0 && field(word, 7, 5) <= 2;
  return flag_op ? out_of_line() : reject(kMsrImmediate);
}

// L = 0, op0 = 00: hints, barriers, PSTATE, WFET/WFIT; Rt is 11111 but
// for WFET/WFIT.
Decoded decode_system_op0_zero(uint32_t word) {
  const uint32_t op1 = field(word, 18, 16);
  const uint32_t crn = field(word, 15, 12);
  const bool no_rt = field(word, 4, 0) == 0b11111;
  if (crn == 0b0001 && op1 == 0b011 && field(word, 11, 6) == 0) return reject(kWaitHint);
  if (crn == 0b0010 && op1 == 0b011 && no_rt) return decode_hint(field(word, 11, 5));
  if (crn == 0b0011 && op1 == 0b011 && no_rt) return decode_barrier(word);
  if (crn == 0b0100 && no_rt) return decode_pstate(word);
  return reject(kUndefined);
}

// L = 1, op0 = 00: TSTART and TTEST (op1 = 011, CRn = 0011); nothing else.
Decoded decode_system_result(uint32_t word) {
  const bool tme = field(word, 18, 16) == 0b011 && field(word, 15, 12) == 0b0011;
  return reject(tme ? kTransaction : kUndefined);
}

// MSR/MRS (register): op0 = 1x, L = 1 reads.
Decoded decode_register_move(uint32_t word) {
  const uint32_t reg = field(word, 20, 5);
  if (bit_set(word, 21)) return mrs_may_step(reg) ? out_of_line() : reject(kMrs);
  return msr_may_step(reg) ? out_of_line() : reject(kMsr);
}

}  // namespace

// Exception generation: 11010100 opc<23:21> imm16<20:5> op2<4:2> LL<1:0>.
Decoded decode_exception(uint32_t word) {
  if (field(word, 4, 2) != 0) return reject(kUndefined);
  const uint32_t ll = field(word, 1, 0);
  switch (field(word, 23, 21)) {
    case 0b000:  // SVC, HVC, SMC: LL = 1, 2, 3
      if (ll == 0) return reject(kUndefined);
      return reject(ll == 1 ? kSvc : kHypervisorCall);
    case 0b001:
      return reject(ll == 0 ? kBrk : kUndefined);
    case 0b010:
      return reject(ll == 0 ? kHlt : kUndefined);
    case 0b011:  // TCANCEL
      return reject(ll == 0 ? kTransaction : kUndefined);
    case 0b101:  // DCPS1..3: LL = 1..3
      return reject(ll == 0 ? kUndefined : kDcps);
    default:
      return reject(kUndefined);
  }
}

// System: 11010101 00 L<21> op0<20:19> op1<18:16> CRn<15:12> CRm<11:8>
// op2<7:5> Rt<4:0>; word<23:22> = 01 holds the 128-bit register moves.
Decoded decode_system(uint32_t word) {
  const uint32_t space = field(word, 23, 22);
  if (space == 0b01) return reject(kSystemPair);
  if (space != 0b00) return reject(kUndefined);
  const bool read = bit_set(word, 21);
  switch (field(word, 20, 19)) {
    case 0b00:
      return read ? decode_system_result(word) : decode_system_op0_zero(word);
    case 0b01:  // SYS/SYSL: cache and TLB maintenance, address translation
      return out_of_line();
    default:
      return decode_register_move(word);
  }
}

}  // namespace dprobe::arch::arm64
