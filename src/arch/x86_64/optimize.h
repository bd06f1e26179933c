// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Jump-optimized probes (the kernel's optprobes, for user space): whether the
// bytes at a probe may be replaced by a jmp rel32 to a per-probe trampoline
// (can_optimize), and the trampoline's bytes (write_trampoline). Pure
// functions over bytes; the agent maps, writes and patches.
//
//   auto plan = can_optimize(function_bytes, function_start, probe, landing_pads);
//   if (!plan) return keep_breakpoint(plan.error());   // "[BREAKPOINT: reason]"
//   std::array<uint8_t, kTrampolineSize> bytes;
//   auto n = write_trampoline(*plan, {trampoline, &hit_handler, probe_cookie}, bytes);
//   if (!n) return keep_breakpoint(n.error());          // e.g. data out of disp32 reach
//   copy(trampoline, bytes, *n);  then patch site_jump(probe, trampoline) over the site.
//
// Not for the hit path: these allocate.
#ifndef DPROBE_ARCH_X86_64_OPTIMIZE_H_
#define DPROBE_ARCH_X86_64_OPTIMIZE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/x86_64/decoder.h"
#include "arch/x86_64/jump_tables.h"
#include "base/result.h"

namespace dprobe::arch::x86_64 {

inline constexpr size_t kJumpLength = 5;               // jmp rel32
inline constexpr size_t kTrampolineSize = 256;         // room for one probe's trampoline
inline constexpr size_t kSyscallTrampolineSize = 512;  // two handler calls

struct OptimizePlan {
  uint64_t address = 0;          // the probe address
  uint8_t displaced_length = 0;  // bytes replaced by the jump: whole instructions, >= 5
  std::vector<Insn> displaced;   // those instructions, in order
};

// The kernel's can_optimize() for user space. `function_code` holds the whole
// function (from its symbol start, `function_address`, to its end);
// `landing_pads` are its exception landing pads (absolute addresses). Refuses,
// with a short reason for "[BREAKPOINT: reason]", when the probe is not on an
// instruction boundary, the function does not decode to its end, fewer than 5
// bytes of whole instructions follow the probe inside the function, a displaced
// instruction cannot run elsewhere (ret, indirect branches, loop/jrcxz, a
// direct branch other than the last displaced instruction, syscall/int,
// anything classify_insn does not run out of line, an endbr64 past the first:
// an indirect branch target), a direct branch of the function or a landing pad
// lands strictly inside the replaced bytes (or a [rip+disp] operand takes an
// address there: lea of a label), or the function has an indirect
// jmp other than a tail call through [rip+disp] whose jump table `read`
// cannot show landing outside the replaced bytes (jump_tables.h; without
// `read`, every one). A RIP-relative operand out of reach is
// write_trampoline's to refuse: it depends on where the trampoline is.
Result<OptimizePlan, std::string> can_optimize(std::span<const uint8_t> function_code,
                                               uint64_t function_address, uint64_t probe_address,
                                               std::span<const uint64_t> landing_pads,
                                               const ReadMemory& read = {});

// Every address the code's direct branches and [rip+disp] operands name,
// decoded from `address` to the end; or why the code does not decode.
Result<std::vector<uint64_t>, std::string> code_targets(std::span<const uint8_t> code,
                                                        uint64_t address);

// Where the trampoline lives and what it calls.
struct TrampolineSpec {
  uint64_t address = 0;  // where the bytes will be
  uint64_t handler = 0;  // extern "C" void handler(SavedRegs* regs, uint64_t cookie)
  uint64_t cookie = 0;   // passed as the second argument (the run-time side's probe pointer)
  // Restore the flags with sahf (every x86_64 CPU but the very first:
  // CPUID 80000001h ECX bit 0) rather than popfq, which alone costs more
  // than the rest of the save and restore. Either way the code before the
  // displaced copy has the same length.
  bool sahf = true;
};

// Whether this CPU has lahf/sahf in 64-bit mode.
bool host_has_sahf();

// The trampoline's bytes, as they must be at spec.address, into `out` (at
// least kTrampolineSize bytes); returns how many were written. It saves a
// SavedRegs frame (regs.h) below the red zone, with every general register and
// the flags as at the probe site, sp the site's rsp, ip the probe address, cs
// 0x33, ss 0x2b, other segments 0, orig_ax -1; calls the handler with the
// direction flag clear and rsp 16-aligned; restores the general registers and
// flags from the frame; runs the relocated displaced instructions; jumps back
// to address + displaced_length. Nothing in it touches x87/SSE/AVX state.
// Fails when a RIP-relative operand is beyond disp32 reach of its copy.
//
// A direct branch as the last displaced instruction goes to the same absolute
// target from the trampoline: jcc rel8/rel32 becomes jcc rel32, or when the
// target is beyond rel32 reach the inverted jcc over jmp *0(%rip); .quad
// target, then the jump back (the not-taken path); jmp rel8/rel32 becomes jmp
// rel32 or the absolute jmp, with no jump back; call rel32 pushes the
// original return address, address + displaced_length, without touching the
// flags or a register other than rsp (lea -8(%rsp),%rsp; movl $lo,(%rsp);
// movl $hi,4(%rsp)), then jumps to the target: the callee returns into the
// original code past the replaced bytes, as it would have.
Result<size_t, std::string> write_trampoline(const OptimizePlan& plan, const TrampolineSpec& spec,
                                             std::span<uint8_t> out);

// Offset, in every trampoline, of the relocated copy of displaced[0]: the
// same for every plan and spec. The copy of displaced[i] starts at this offset
// + (its address - plan.address): fixing a disp32 keeps a length, and only the
// last instruction (a relocated branch) may get a copy of another length.
size_t displaced_copy_offset();

// Offset, in the trampoline, of the relocated copy of the displaced
// instruction at `pc` (one of plan.displaced's addresses, other than the
// first), for moving a thread stopped inside the displaced bytes; nullopt
// when `pc` starts no displaced instruction (or is the probe address itself:
// a thread there has not run the site yet and needs no move).
std::optional<uint64_t> trampoline_offset_of(const OptimizePlan& plan, uint64_t pc);

// The reverse, for a fault or a signal taken in the relocated copy (its pc is
// the trampoline's): the original address of the displaced instruction whose
// copy starts at `trampoline_offset`, the first one included; nullopt
// elsewhere (inside an instruction, inside a relocated branch's sequence, in
// the save/call/restore code, past the copy).
std::optional<uint64_t> original_pc_of(const OptimizePlan& plan, uint64_t trampoline_offset);

// The 5 bytes written over the site: e9 rel32 to `trampoline`, which must be
// within +-2 GiB of the site (the caller places it so; asserted in debug).
std::array<uint8_t, kJumpLength> site_jump(uint64_t site, uint64_t trampoline);

// Whether the instruction reads or writes x87, MMX, SSE, AVX or AVX-512
// state (a vector, x87 or mask register, MXCSR, or an XSAVE-family
// instruction; bytes that do not decode count as yes): the hit path must
// have none. For tests that disassemble it.
bool touches_extended_state(const Insn& insn);

// ---- System call sites ------------------------------------------------------
//
// A `syscall` instruction the program runs often, made into a jump so that
// the agent sees the call without a SIGSYS: the instructions that end with
// the syscall (at least 5 bytes, the syscall last) are replaced by a jump
// to a trampoline that runs them, calls enter(regs, cookie) just before
// the syscall and exit(regs, cookie) just after it, and jumps back to the
// instruction after the syscall. Ending the range at the syscall keeps
// every thread the kernel holds in that call, and every return from a
// SIGSYS there, outside the replaced bytes: they resume after them.
//
// The instructions before the syscall are copied first, each at its own
// offset from the trampoline's start (a disp32 retargeted keeps the
// length), so a thread found among them moves to the same offset of the
// trampoline, and one about to run the syscall to the enter call.

// Refuses as can_optimize does (boundaries, branches into the bytes,
// landing pads, what cannot run elsewhere), and any branch among the
// instructions before the syscall.
Result<OptimizePlan, std::string> can_rewrite_syscall(std::span<const uint8_t> function_code,
                                                      uint64_t function_address,
                                                      uint64_t syscall_address,
                                                      std::span<const uint64_t> landing_pads,
                                                      const ReadMemory& read = {});

struct SyscallTrampolineSpec {
  uint64_t address = 0;
  // extern "C" void enter(SavedRegs* regs, const SyscallLinks* links), and
  // exit the same, after the syscall, with its result in ax.
  uint64_t enter = 0;
  uint64_t exit = 0;
  uint64_t site = 0;  // the syscall's address
  // Where the site's two gadgets go (kSyscallGadgetSize bytes), in the text
  // Syscall User Dispatch lets through without reading the thread's
  // selector: `syscall; jmp <back to the exit call>`, then `syscall; jmp
  // <back after the site>` (16 bytes each); 0: no gadgets.
  uint64_t gadget = 0;
  bool sahf = true;  // as TrampolineSpec::sahf
};

// The trampoline's last 32 bytes (kSyscallLinksOffset), which enter and
// exit are given: the site, and the ways to make the call. Enter puts one
// of them in the frame's rcx, which the syscall overwrites anyway; the
// trampoline jumps there once the registers are back.
struct SyscallLinks {
  uint64_t site;        // the syscall's address; also the frames' ip
  uint64_t dispatched;  // the first gadget (then exit), or `plain` where there is none
  uint64_t plain;       // the trampoline's own syscall (then exit), which the dispatch sees
  uint64_t returned;    // the second gadget (straight back: no exit call), or 0
};
inline constexpr size_t kSyscallLinksOffset = kSyscallTrampolineSize - sizeof(SyscallLinks);
inline constexpr size_t kSyscallGadgetSize = 32;
// Where the first gadget keeps its way back into the trampoline (the exit
// call): after `syscall` (2 bytes) and `jmp *0(%rip)` (6), the address.
inline constexpr size_t kSyscallGadgetWayBack = 8;

// Into `out` (kSyscallTrampolineSize bytes): the copies, then the two
// calls around the call (made by `jmp *%rcx`), each saving and restoring
// the general registers and flags as write_trampoline does (the handler
// may change them: enter the call's number and arguments, exit its
// result), and the links. Into `gadget` (kSyscallGadgetSize bytes, where
// spec.gadget is not 0): the gadget. Returns kSyscallTrampolineSize.
Result<size_t, std::string> write_syscall_trampoline(const OptimizePlan& plan,
                                                     const SyscallTrampolineSpec& spec,
                                                     std::span<uint8_t> out,
                                                     std::span<uint8_t> gadget = {});

}  // namespace dprobe::arch::x86_64

#endif  // DPROBE_ARCH_X86_64_OPTIMIZE_H_
