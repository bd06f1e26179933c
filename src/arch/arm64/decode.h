// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What to do with the A64 instruction a breakpoint displaces (the kernel's
// arm_probe_decode_insn, arch/arm64/kernel/probes/decode-insn.c): refuse it,
// step a copy out of line, or simulate it on the saved registers
// (simulate.h) because its effect depends on where it runs.
//
//   Decoded d = decode_insn(word);
//   if (!can_probe(d)) return error(d.reason);
//   if (in_exclusive_sequence(words_before)) return error("inside LDXR...STXR");
//
// Everything a hit needs is in Decoded, so simulation never decodes.
//
// Where the kernel's rules were unclear or do not fit user space:
// - Hints: the kernel's whitelist steps (NOP, XPACLRI, PACIA1716, PACIB1716,
//   PACIAZ, PACIASP, PACIBZ, PACIBSP, BTI *); the rest is refused as there.
//   PACI* sign x30 with sp or x16/zero as the modifier, which the slot
//   leaves unchanged, so the signature is the same out of line. AUTI* are
//   refused: a failed check faults (FEAT_FPAC) at the slot's address.
// - SVC is refused until the engine runs a system call out of line.
// - Pointer-authenticated branches (BRAA, BLRAA, RETAA, ...) are refused:
//   authenticating the target needs the process's keys, which only the
//   kernel holds, and BLRAA* out of line would link to the slot.
// - MRS steps only for registers user space reads the same from anywhere
//   (NZCV, FPCR, FPSR, TPIDR_EL0, TPIDRRO_EL0, CNTVCT_EL0, CNTFRQ_EL0,
//   DCZID_EL0, CTR_EL0, and the ID registers the kernel emulates for user
//   space: op0=3 op1=0 CRn=0 CRm=0,2..7, MIDR_EL1 among them); MSR steps for
//   NZCV, FPCR, FPSR and TPIDR_EL0 only. The kernel steps every MRS but DAIF
//   and refuses every MSR.
// - CFINV, XAFLAG and AXFLAG share MSR (immediate)'s encoding space and
//   the kernel refuses them with it; they only rewrite NZCV, so they step.
// - BC.cond (FEAT_HBC) is simulated like B.cond: the kernel's mask misses
//   it and would step a PC-relative branch.
// - LDR/LDRSW/PRFM (literal) are simulated as the kernel's kprobes do (its
//   uprobes refuse them).
// - LDR (literal) to S, D or Q registers is refused: SavedRegs has no
//   vector registers to load into (the kernel's literal masks miss it, so
//   it steps and reads beside the slot).
// - Exclusives are exactly LDXR/LDAXR/STXR/STLXR and the pairs, all sizes;
//   CASP, which shares their encoding space, steps.
// - Unallocated encodings are refused where the decoder reads the group:
//   the reserved and unallocated top-level spaces, branches, exception
//   generation, system instructions, literal loads. In the data-processing,
//   SIMD, SVE/SME and other load/store groups an unallocated word steps and
//   raises SIGILL in the slot, as it would have in place.
#ifndef DPROBE_ARCH_ARM64_DECODE_H_
#define DPROBE_ARCH_ARM64_DECODE_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace dprobe::arch::arm64 {

enum class InsnClass : uint8_t { kReject, kOutOfLine, kSimulate };

// The simulated operations (kSimulate); kNone otherwise.
enum class Op : uint8_t {
  kNone,
  kB,
  kBl,
  kBCond,  // and BC.cond
  kCbz,
  kCbnz,
  kTbz,
  kTbnz,
  kAdr,
  kAdrp,
  kLdrLiteral,    // LDR Wt or Xt (literal); a W load zero-extends into Xt
  kLdrswLiteral,  // LDRSW Xt (literal): sign-extends 4 bytes
  kPrfmLiteral,   // a prefetch: nothing to do but go on
  kBr,
  kBlr,
  kRet,
};

struct Decoded {
  InsnClass cls = InsnClass::kReject;
  // kReject: what and why, a static string; empty otherwise.
  const char* reason = "";
  Op op = Op::kNone;
  // Rt (CBZ, TBZ, literal loads), Rd (ADR, ADRP) or Rn (BR, BLR, RET);
  // 31 is the zero register for all of them.
  uint8_t reg = 0;
  // The X form: CBZ/CBNZ's sf, TBZ/TBNZ testing bits 32..63, LDR Xt, LDRSW.
  bool wide = false;
  uint8_t bit = 0;         // TBZ/TBNZ: the bit tested, 0..63
  uint8_t cond = 0;        // B.cond: 0..15, eq ne cs cc mi pl vs vc hi ls ge lt gt le al nv
  uint8_t load_bytes = 0;  // literal loads: 4 or 8; 0 for PRFM
  // Bytes from the instruction's address (ADRP: from its 4 KiB page), for
  // every PC-relative operation.
  int64_t offset = 0;
};

// Decodes and classifies one A64 instruction word (as a number: the
// caller reads the little-endian bytes).
Decoded decode_insn(uint32_t word);

inline bool can_probe(const Decoded& d) { return d.cls != InsnClass::kReject; }

// How far back in_exclusive_sequence looks: Arm recommends at most 128
// bytes between a load-exclusive and its store-exclusive (the kernel's
// MAX_ATOMIC_CONTEXT_SIZE).
inline constexpr size_t kExclusiveScanWords = 32;

// Whether a probe after `preceding` (the words before it, nearest last;
// only the last kExclusiveScanWords count) sits inside an LDXR...STXR
// sequence: scanning back meets a load-exclusive before any
// store-exclusive or CLREX. The breakpoint's trap would clear the
// exclusive monitor there and the loop would never succeed. The kernel
// stops at a store-exclusive only; CLREX ends the sequence just as well.
bool in_exclusive_sequence(std::span<const uint32_t> preceding);

}  // namespace dprobe::arch::arm64

#endif  // DPROBE_ARCH_ARM64_DECODE_H_
