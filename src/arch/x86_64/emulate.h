// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Emulation of the branches classify_insn marks kEmulate, on the saved
// registers of a hit (the kernel's branch_emulate_op): what the CPU would
// have done to rip, rsp, rcx and the stack, without running the instruction.
//
//   regs.slot[kIp] = insn.address;  // the trap handler's job
//   if (emulate_insn(insn, c, regs, memory) == EmulateStatus::kFault) deliver_segv();
//
// Runs inside a signal handler: no allocation, no libc, nothing but
// arithmetic on `regs` and calls through MemoryAccess.
#ifndef DPROBE_ARCH_X86_64_EMULATE_H_
#define DPROBE_ARCH_X86_64_EMULATE_H_

#include <cstddef>
#include <cstdint>

#include "arch/memory_access.h"
#include "arch/x86_64/classify.h"
#include "arch/x86_64/decoder.h"
#include "arch/x86_64/regs.h"

namespace dprobe::arch::x86_64 {

enum class EmulateStatus : uint8_t { kOk, kFault };

// Whether Intel condition code `cond` (0..15: o no b ae e ne be a s ns p np
// l ge le g) holds for `rflags`.
bool condition_holds(uint8_t cond, uint64_t rflags);

// Updates ip, sp, cx and the stack as the CPU would for `insn`. On kFault
// (a stack or target read/write failed) the registers are unchanged. An
// instruction not classified kEmulate is refused with kFault too.
EmulateStatus emulate_insn(const Insn& insn, const Classified& c, SavedRegs& regs,
                           MemoryAccess& memory);

}  // namespace dprobe::arch::x86_64

#endif  // DPROBE_ARCH_X86_64_EMULATE_H_
