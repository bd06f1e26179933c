// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// x86_64 saved register frame: the order in which the agent's trap and
// trampoline code store registers, and the names the language gives them
// (the kernel's x86 pt_regs names).
#ifndef DPROBE_ARCH_X86_64_REGS_H_
#define DPROBE_ARCH_X86_64_REGS_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace dprobe::arch::x86_64 {

// clang-format off
enum Reg : uint16_t {
  kAx, kBx, kCx, kDx, kSi, kDi, kBp, kSp,
  kR8, kR9, kR10, kR11, kR12, kR13, kR14, kR15,
  kIp, kFlags, kCs, kSs, kDs, kEs, kFs, kGs, kOrigAx,
  kRegCount
};
// clang-format on

inline constexpr std::array<std::string_view, kRegCount> kRegisterNames = {
    "ax",  "bx",  "cx",  "dx", "si",    "di", "bp", "sp", "r8", "r9", "r10", "r11",    "r12",
    "r13", "r14", "r15", "ip", "flags", "cs", "ss", "ds", "es", "fs", "gs",  "orig_ax"};

inline constexpr std::array<Reg, 6> kArgRegisters = {kDi, kSi, kDx, kCx, kR8, kR9};

// The registers the stack unwinder follows, by the psABI's DWARF column
// (rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then the return address
// column 16), and the frame slot of each.
inline constexpr uint32_t kDwarfColumns = 17;
inline constexpr uint32_t kDwarfSpColumn = 7;
inline constexpr std::array<uint16_t, kDwarfColumns> kSlotOfDwarfColumn = {
    kAx, kDx, kCx, kBx, kSi, kDi, kBp, kSp, kR8, kR9, kR10, kR11, kR12, kR13, kR14, kR15, kIp};

// A frame-pointer frame, for code without unwind tables (JIT code: V8,
// HotSpot, CPython's perf trampoline keep rbp as the frame pointer): `push
// rbp; mov rbp, rsp` leaves at rbp the caller's rbp, above it the return
// address, and the caller's rsp above both.
inline constexpr uint32_t kDwarfFpColumn = 6;   // rbp
inline constexpr uint32_t kDwarfRaColumn = 16;  // the return address
inline constexpr uint64_t kFrameRecordReturnOffset = 8;
inline constexpr uint64_t kFrameRecordSize = 16;
inline constexpr uint64_t kFramePointerAlignment = 8;

// The frame itself: one 64-bit word per register, indexed by Reg.
struct SavedRegs {
  uint64_t slot[kRegCount];
};

// The slots from cs up (cs ss ds es fs gs orig_ax) hold the same values at
// every hit outside a system call: the 64-bit user code and data segments,
// null selectors, no system call. An optimized probe's trampoline leaves
// them unwritten (seven stores are a tenth of a hit); a hit whose events
// read one fills them first.
inline constexpr Reg kFirstFixedSlot = kCs;
inline void fill_fixed_slots(SavedRegs& regs) {
  regs.slot[kCs] = 0x33;
  regs.slot[kSs] = 0x2b;
  regs.slot[kDs] = regs.slot[kEs] = regs.slot[kFs] = regs.slot[kGs] = 0;
  regs.slot[kOrigAx] = ~uint64_t{0};
}

}  // namespace dprobe::arch::x86_64

#endif  // DPROBE_ARCH_X86_64_REGS_H_
