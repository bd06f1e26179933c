// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the probe engine asks of the architecture, for the host's ISA. This
// is the one arch header core code includes; the ISA directories stay
// behind it (the kernel's arch_prepare_kprobe / arch_arm_kprobe family).
//
//   auto insn = prepare_insn(function_bytes, function_start, probe_address);
//   write_slot(*insn, slot_address, slot_bytes);    // out-of-line copy
//   ... on a hit:
//   resume_after_hit(*insn, slot_address, regs, memory);   // sets regs' ip
#ifndef DPROBE_ARCH_PROBE_INSN_H_
#define DPROBE_ARCH_PROBE_INSN_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "arch/memory_access.h"
#include "arch/refusal.h"
#include "base/result.h"

#if defined(__x86_64__)
#include "arch/x86_64/classify.h"
#include "arch/x86_64/emulate.h"
#include "arch/x86_64/optimize.h"
#include "arch/x86_64/regs.h"
#elif defined(__aarch64__)
#include "arch/arm64/optimize.h"
#include "arch/arm64/probe.h"
#include "arch/arm64/regs.h"
#else
#error "the probe engine supports x86_64 and arm64 hosts"
#endif

namespace dprobe::arch {

#if defined(__x86_64__)
using SavedRegs = x86_64::SavedRegs;
inline constexpr uint16_t kIpSlot = x86_64::kIp;
inline constexpr uint16_t kSpSlot = x86_64::kSp;
// The slots an optimized probe's trampoline leaves for a hit to fill.
inline constexpr uint16_t kFirstFixedSlot = x86_64::kFirstFixedSlot;
inline void fill_fixed_slots(SavedRegs& regs) { x86_64::fill_fixed_slots(regs); }
// The system call ABI in the saved frame: the number (and orig_ax, where
// the kernel keeps it for a restart), the result, the six arguments.
inline constexpr uint64_t kSyscallInsnBytes = 2;  // syscall (0f 05)
inline constexpr uint16_t kSyscallNrSlot = x86_64::kAx;
inline constexpr uint16_t kSyscallOrigNrSlot = x86_64::kOrigAx;
inline constexpr uint16_t kSyscallResultSlot = x86_64::kAx;
inline constexpr uint16_t kSyscallArgSlots[6] = {x86_64::kDi,  x86_64::kSi, x86_64::kDx,
                                                 x86_64::kR10, x86_64::kR8, x86_64::kR9};
// The unwinder's registers by DWARF column (core/unwind_registers.h).
inline constexpr uint32_t kDwarfColumns = x86_64::kDwarfColumns;
inline constexpr uint32_t kDwarfSpColumn = x86_64::kDwarfSpColumn;
inline constexpr auto kSlotOfDwarfColumn = x86_64::kSlotOfDwarfColumn;
// The frame record a frame pointer points at (core/hit/stack_unwind.cc's
// step for code without unwind tables).
inline constexpr uint32_t kDwarfFpColumn = x86_64::kDwarfFpColumn;
inline constexpr uint32_t kDwarfRaColumn = x86_64::kDwarfRaColumn;
inline constexpr uint64_t kFrameRecordReturnOffset = x86_64::kFrameRecordReturnOffset;
inline constexpr uint64_t kFrameRecordSize = x86_64::kFrameRecordSize;
inline constexpr uint64_t kFramePointerAlignment = x86_64::kFramePointerAlignment;

using OptimizePlan = x86_64::OptimizePlan;
inline constexpr size_t kTrampolineBytes = x86_64::kTrampolineSize;
inline constexpr size_t kSyscallTrampolineBytes = x86_64::kSyscallTrampolineSize;
// A rewritten site's links (enter and exit are given them), the frame slot
// enter puts the way to make the call in, and the size of a gadget.
using SyscallLinks = x86_64::SyscallLinks;
inline constexpr uint16_t kSyscallTargetSlot = x86_64::kCx;
inline constexpr size_t kSyscallGadgetBytes = x86_64::kSyscallGadgetSize;
inline constexpr size_t kSyscallGadgetWayBack = x86_64::kSyscallGadgetWayBack;

// A decoded, classified probed instruction.
struct ProbeInsn {
  x86_64::Insn insn;
  x86_64::Classified cls;
};

// The longest instruction, in bytes.
inline constexpr size_t kMaxInsnBytes = x86_64::kMaxInsnLength;
// How far an out-of-line slot may be from its code: ±1 GiB, so that a
// copied instruction's RIP-relative operand (within ±2 GiB of the code)
// and the jump back still reach in most cases.
inline constexpr uint64_t kSlotReach = uint64_t{1} << 30;

// The probed instruction's address, and its bytes (kMaxInsnBytes of them,
// zero past its end: a key that tells two instructions apart).
inline uint64_t insn_address(const ProbeInsn& insn) { return insn.insn.address; }
inline const std::array<uint8_t, kMaxInsnBytes>& insn_bytes(const ProbeInsn& insn) {
  return insn.insn.bytes;
}
#elif defined(__aarch64__)
using SavedRegs = arm64::SavedRegs;
inline constexpr uint16_t kIpSlot = arm64::kPc;
inline constexpr uint16_t kSpSlot = arm64::kSp;
// The trampoline writes every slot: none is left for a hit to fill.
inline constexpr uint16_t kFirstFixedSlot = arm64::kRegCount;
inline void fill_fixed_slots(SavedRegs&) {}
// The unwinder's registers by DWARF column: x0..x30 are columns 0..30
// (x30, the link register, is the return-address column), sp is 31.
inline constexpr uint32_t kDwarfColumns = 32;
inline constexpr uint32_t kDwarfSpColumn = 31;
inline constexpr auto kSlotOfDwarfColumn = [] {
  std::array<uint16_t, kDwarfColumns> slots{};
  for (uint16_t i = 0; i < kDwarfColumns; ++i) slots[i] = i;
  return slots;
}();
// The AAPCS64 frame record {x29, x30} at x29: the caller's x29, then the
// return address. Where the caller's sp is the record does not say: it is
// taken as just above the record, where V8 and HotSpot push it (at the top
// of their frames). GCC puts it at the bottom of a compiled frame: there
// the caller's sp is higher, which a caller whose CFA is sp-based would
// misread; the compiled code this step meets has no FDE, which is rare.
inline constexpr uint32_t kDwarfFpColumn = 29;
inline constexpr uint32_t kDwarfRaColumn = 30;
inline constexpr uint64_t kFrameRecordReturnOffset = 8;
inline constexpr uint64_t kFrameRecordSize = 16;
inline constexpr uint64_t kFramePointerAlignment = 16;

// The system call ABI: the number in x8, arguments and result in x0..x5.
// The frame has no orig_x0: the number stands in for it.
inline constexpr uint64_t kSyscallInsnBytes = 4;  // svc #0
inline constexpr uint16_t kSyscallNrSlot = 8;
inline constexpr uint16_t kSyscallOrigNrSlot = 8;
inline constexpr uint16_t kSyscallResultSlot = arm64::kX0;
inline constexpr uint16_t kSyscallArgSlots[6] = {0, 1, 2, 3, 4, 5};

// Branch-optimized probes (arch/arm64/optimize.h); system call sites are
// not rewritten (no plan is ever made for one).
using OptimizePlan = arm64::OptimizePlan;
inline constexpr size_t kTrampolineBytes = arm64::kTrampolineSize;
inline constexpr size_t kSyscallTrampolineBytes = 0;
struct SyscallLinks {  // as x86_64's (arch/x86_64/optimize.h), never made here
  uint64_t site;
  uint64_t dispatched;
  uint64_t plain;
  uint64_t returned;
};
inline constexpr uint16_t kSyscallTargetSlot = 16;  // never used: no trampoline
inline constexpr size_t kSyscallGadgetBytes = 0;
inline constexpr size_t kSyscallGadgetWayBack = 0;

using ProbeInsn = arm64::ProbeInsn;
inline constexpr size_t kMaxInsnBytes = arm64::kInsnBytes;
inline constexpr uint64_t kSlotReach = arm64::kSlotReach;
inline uint64_t insn_address(const ProbeInsn& insn) { return insn.address; }
inline std::array<uint8_t, kMaxInsnBytes> insn_bytes(const ProbeInsn& insn) {
  return {static_cast<uint8_t>(insn.word), static_cast<uint8_t>(insn.word >> 8),
          static_cast<uint8_t>(insn.word >> 16), static_cast<uint8_t>(insn.word >> 24)};
}
#endif

// Decodes from the function's start (when its bytes are known) to check the
// probe is on an instruction boundary, then decodes and classifies the
// probed instruction. `code` starts at `code_address` and must reach past
// the probed instruction.
Result<ProbeInsn, Refusal> prepare_insn(std::span<const uint8_t> code, uint64_t code_address,
                                        uint64_t probe_address);

// The bytes of an out-of-line slot: the instruction (relocated) and a jump
// back. Emulated instructions get one too, run only when their emulation
// faults, so that the program gets the fault the instruction would raise.
inline constexpr size_t kSlotBytes = 32;
Result<size_t, std::string> write_slot(const ProbeInsn& insn, uint64_t slot_address,
                                       std::span<uint8_t> out);

std::span<const uint8_t> breakpoint_insn();
// Whether `bytes` (breakpoint_insn().size() of them) are a breakpoint
// instruction of any kind: int3, or a BRK of any immediate.
bool is_breakpoint_insn(std::span<const uint8_t> bytes);
// The probe address of a breakpoint trap, from the trap's pc.
uint64_t probe_address_of_trap(uint64_t trap_pc);

// After the handlers ran: makes regs continue the program, in the slot or
// past an emulated instruction. noexcept and allocation-free: runs in a
// signal handler.
void resume_after_hit(const ProbeInsn& insn, uint64_t slot_address, SavedRegs& regs,
                      MemoryAccess& memory) noexcept;

// ---- Jump optimization (the kernel's arch_prepare_optimized_kprobe family)
// x86_64: a jmp rel32 over whole instructions (arch/x86_64/optimize.h);
// arm64: one B over the probed instruction (arch/arm64/optimize.h). The
// jump's first breakpoint_insn().size() bytes are its head, written last.

// Whether the probe may become a jump to a trampoline: the plan, or the
// reason it stays a breakpoint. `code` is the whole function, as the
// program has it (no breakpoint bytes).
// `read` shows what the code refers to beyond itself (x86_64: a jump
// table); without it such code keeps its breakpoints.
Result<OptimizePlan, std::string> plan_optimization(std::span<const uint8_t> code,
                                                    uint64_t function_address,
                                                    uint64_t probe_address,
                                                    std::span<const uint64_t> landing_pads,
                                                    const ReadMemory& read = {});
// The addresses `code` (decoded from `address`) branches to or takes as
// code addresses, for code outside a function whose extent is a guess:
// where one lands inside a jump's replaced bytes, no jump goes there. On
// arm64 a jump replaces one instruction, which nothing lands inside: none.
Result<std::vector<uint64_t>, std::string> code_targets(std::span<const uint8_t> code,
                                                        uint64_t address);
// The bytes the jump replaces: their count, and the original bytes.
size_t displaced_length(const OptimizePlan& plan);
std::vector<uint8_t> displaced_bytes(const OptimizePlan& plan);
// The trampoline's bytes at `address`: a call of handler(regs, cookie),
// then the displaced instructions, then the way back.
Result<size_t, std::string> write_trampoline(const OptimizePlan& plan, uint64_t address,
                                             uint64_t handler, uint64_t cookie,
                                             std::span<uint8_t> out);
// Where, in the trampoline at `trampoline`, the displaced instruction that
// was at `pc` is copied (pc: one of the displaced instructions' addresses).
uint64_t trampoline_copy_address(const OptimizePlan& plan, uint64_t trampoline, uint64_t pc);
// A system call site (the `syscall` at `syscall_address`) made into a jump:
// the instructions that end with it, at least a jump's worth, or why not.
Result<OptimizePlan, std::string> plan_syscall_rewrite(std::span<const uint8_t> code,
                                                       uint64_t function_address,
                                                       uint64_t syscall_address,
                                                       std::span<const uint64_t> landing_pads,
                                                       const ReadMemory& read = {});
// Where the displaced instructions of a plan start.
uint64_t displaced_address(const OptimizePlan& plan);
// Its trampoline: the instructions before the syscall, enter(regs, links),
// the call, exit(regs, links), and the way back; and where `gadget` is not
// 0, the gadget's bytes (kSyscallGadgetBytes) into `gadget_out`: the call
// made from text that Syscall User Dispatch lets through unread.
Result<size_t, std::string> write_syscall_trampoline(const OptimizePlan& plan, uint64_t address,
                                                     uint64_t enter, uint64_t exit, uint64_t site,
                                                     uint64_t gadget, std::span<uint8_t> out,
                                                     std::span<uint8_t> gadget_out);
uint64_t syscall_trampoline_copy_address(const OptimizePlan& plan, uint64_t trampoline,
                                         uint64_t pc);
// The `length` bytes written over the site: the jump, then breakpoints in
// what is left of the displaced instructions (never run).
std::vector<uint8_t> site_jump_bytes(uint64_t site, uint64_t trampoline, size_t length);

// A jump to the absolute address `target` that may stand anywhere, for a
// function's entry whose every call goes elsewhere and never comes back
// (agent/exit_hold.cc): x86_64's jmp *0(%rip) and the address after it
// (14 bytes), arm64's ldr x16, 8; br x16 and the address (16 bytes).
std::vector<uint8_t> detour_jump(uint64_t target);

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_PROBE_INSN_H_
