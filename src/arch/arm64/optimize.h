// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Branch-optimized probes on arm64 (the kernel's arm64 optprobes, for user
// space): the probed instruction is replaced by one B to a trampoline of
// the probe's own. A64 instructions are 4 bytes and an aligned 4-byte
// store is single-copy atomic, so no thread ever sees half a branch, and
// no other instruction is displaced: no thread can be "inside" the bytes,
// no branch can land in them. Pure functions over words; the agent maps,
// writes and patches.
//
//   auto plan = can_optimize(insn);                  // insn: prepare_probe's
//   if (!plan) return keep_breakpoint(plan.error());  // "[BREAKPOINT: reason]"
//   auto n = write_trampoline(*plan, {trampoline, &hit_handler, cookie}, bytes);
//   then patch site_branch(probe, trampoline) over the probe.
//
// The trampoline:
//
//   sub  sp, sp, #272              ; the SavedRegs frame (regs.h), below sp:
//   stp  x0, x1, [sp] ...          ;   arm64 Linux has no red zone
//   str  x30, [sp, #240]
//   add  x0, sp, #272; ldr x1, =probe; stp x0, x1, [sp, #248]   ; sp, pc
//   mrs  x0, nzcv; str x0, [sp, #264]                           ; pstate
//   mov  x0, sp; ldr x1, =cookie; ldr x16, =handler; blr x16
//   ldr  x0, [sp, #264]; msr nzcv, x0
//   ldp  x0, x1, [sp] ... ldr x30, [sp, #240]   ; the handler may change
//   add  sp, sp, #272                           ;   them (x30: a return probe)
//   <the instruction, or what it does here>     ; displaced_copy_offset()
//   b    probe + 4                              ; where it falls through
//   .quad literals                              ; probe, cookie, handler, ...
//
// General registers and NZCV only: the hit path is built with
// -mgeneral-regs-only (src/CMakeLists.txt), so the program's FP/SIMD and
// SVE state is never touched.
//
// What the instruction becomes in the trampoline:
//   stepped out of line:   itself (it does not depend on its address);
//   B / BL:                B target (BL first loads x30 with probe + 4);
//                          out of B's reach, LDR x16, =target; BR x16: a
//                          call or tail call may clobber x16 (IP0) anyway;
//   B.cond, CB(N)Z, TB(N)Z: itself branching +8, B probe + 4, B target;
//   ADR / ADRP:            LDR Xd, =the address it computes;
//   LDR / LDRSW (literal): LDR Xt, =the literal's address; LDR{,SW} Rt, [Xt];
//   PRFM (literal):        nothing;
//   BR, RET:               itself.
// BLR stays a breakpoint: out of line it would link to the trampoline, and
// a BR in its place could not land on a BTI C target.
#ifndef DPROBE_ARCH_ARM64_OPTIMIZE_H_
#define DPROBE_ARCH_ARM64_OPTIMIZE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "arch/arm64/probe.h"
#include "base/result.h"

namespace dprobe::arch::arm64 {

inline constexpr size_t kTrampolineSize = 256;

struct OptimizePlan {
  ProbeInsn insn;  // the one instruction the branch replaces
};

// Whether the prepared probe may become a branch, or why not.
Result<OptimizePlan, std::string> can_optimize(const ProbeInsn& insn);

struct TrampolineSpec {
  uint64_t address = 0;  // where the bytes will be: 4-byte aligned, in B's reach of the probe
  uint64_t handler = 0;  // extern "C" void handler(SavedRegs* regs, uint64_t cookie)
  uint64_t cookie = 0;   // its second argument
};

// The trampoline's bytes into `out` (at least kTrampolineSize); how many.
// Fails when the trampoline is out of B's reach of the probe (either way)
// or of a conditional branch's target.
Result<size_t, std::string> write_trampoline(const OptimizePlan& plan, const TrampolineSpec& spec,
                                             std::span<uint8_t> out);

// Where, in every trampoline, the instruction's copy starts: a trap at the
// probe resumes there with the trap's registers.
size_t displaced_copy_offset();

// The word written over the probe: B trampoline (in reach: the caller
// placed it so).
uint32_t site_branch(uint64_t site, uint64_t trampoline);

}  // namespace dprobe::arch::arm64

#endif  // DPROBE_ARCH_ARM64_OPTIMIZE_H_
