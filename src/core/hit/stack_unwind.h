// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The user stack at a probe hit, unwound through the loaded objects'
// .eh_frame call frame information (DWARF CFI, as the LSB's .eh_frame and
// .eh_frame_hdr carry it): no frame pointers needed, but for code without
// tables (JIT code), which is unwound by its frame pointer. It runs on the hit
// path, in a signal handler or an optimized probe's trampoline while the
// program may be anywhere, inside the C library included: every read of the
// program's memory is fault-safe, nothing allocates, locks or calls libc,
// the stack used is bounded (about 2.5 KiB) and so is the work (the depth,
// the CFA instructions run per frame, binary searches of the tables).
//
//   uint64_t pcs[kMaxStackDepth];
//   uint32_t n = unwind_stack(regs, objects, pcs, kMaxStackDepth, &fixup);
//
// pcs[0] is the interrupted pc (the probed address); then each caller's
// return address, as gdb's `bt` and the kernel's user stacks show them (a
// return address, not the call's own address).
#ifndef DPROBE_CORE_STACK_UNWIND_H_
#define DPROBE_CORE_STACK_UNWIND_H_

#include <cstdint>

#include "arch/probe_insn.h"
#include "core/hit/unwind_cache.h"
#include "core/hit/unwind_objects.h"

namespace dprobe::core {

// The deepest stack a record carries.
inline constexpr uint32_t kMaxStackDepth = 16;

// The agent's return probes replace a probed call's return address by a
// return stub's. The unwinder asks this for every return address it reads,
// so that the stub is never shown as a frame and the unwind goes on in the
// real caller.
class ReturnAddressFixup {
 public:
  // `address` was read as a frame's return address from the stack slot
  // `slot` (0: it was in a register). Answers the address to go on with:
  // `address` itself when it is no stub's, the real return address when it
  // is, 0 to end the stack there.
  virtual uint64_t real_return_address(uint64_t address, uint64_t slot) const noexcept = 0;

 protected:
  ~ReturnAddressFixup() = default;
};

// Writes the call chain at a hit into pcs[0..max) and returns its length:
// pcs[0] = the saved ip, then the return addresses of the callers. A frame
// no table covers (a pc in no object of `objects`, or in a gap between
// FDEs: JIT code, V8's builtins) is unwound by its frame pointer, when that
// is plausible (aligned, a little above the frame's sp), and the tables
// take over again at the first caller they cover. Stops at max, at a frame
// neither way unwinds (CFI it does not know, an implausible frame
// pointer), at an undefined or zero return address (the outermost frame),
// at a read that fails, or when the CFA does not move up the stack (past a
// signal frame it may move anywhere: the handler may run on its own
// stack). `fixup` and `cache` may be null.
uint32_t unwind_stack(const arch::SavedRegs& regs, const UnwindObjects& objects, uint64_t* pcs,
                      uint32_t max, const ReturnAddressFixup* fixup,
                      UnwindMemory memory = safe_unwind_memory(),
                      UnwindCache* cache = nullptr) noexcept;

}  // namespace dprobe::core

#endif  // DPROBE_CORE_STACK_UNWIND_H_
