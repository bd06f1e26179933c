// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The trampoline of a jump-optimized probe (optimize.h), byte by byte:
//
//   lea   -184(%rsp),%rsp        ; step over the program's red zone and the
//                                ;   frame's fixed slots (cs..orig_ax, regs.h)
//   pushfq                       ; the rest of the SavedRegs frame, pushed
//   push  rip_literal(%rip)      ;   from flags down to its first slot (ax),
//   push  %r15 ... push %rax     ;   so slot k ends at frame + 8k
//   addq  $K,56(%rsp)            ; push %rsp stored rsp before that push: make it the site's
//   mov   %rsp,%rdi              ; the frame
//   movabs $cookie,%rsi
//   mov   %rsp,%rbx              ; callee-saved: the unaligned rsp
//   and   $-16,%rsp
//   cld                          ; the ABI's direction flag for the handler
//   movabs $handler,%rax
//   call  *%rax
//   mov   %rbx,%rsp
//   <the flags from their slot> ; std if DF was set, OF by an add, then sahf
//                                ;   (rax, rdx scratch: popped after)
//   pop   %rax ... pop %r15      ; back from the frame, skipping sp
//   lea   192(%rsp),%rsp         ; ip, flags, segments and the red zone at once
//   <displaced instructions>     ; RIP-relative disp32 retargeted; the last
//                                ;   may be a direct branch, re-encoded, or a
//                                ;   ret, copied (no jump back after it):
//                                ;   jcc rel32 target  (or j!cc +14; jmp *0(%rip); .quad target)
//                                ;   jmp rel32 target  (or jmp *0(%rip); .quad target), no jump
//                                back ;   lea -8(%rsp),%rsp; movl $lo,(%rsp); movl $hi,4(%rsp); ;
//                                jmp target        (a call: the original return address)
//   jmp   address+displaced_length   (or jmp *0(%rip); .quad target)
//   .quad probe address          ; rip_literal, never executed
//
// General registers, flags and immediates only: nothing touches x87/SSE/AVX.
#include <algorithm>
#include <cassert>
#include <cstdio>
#include <initializer_list>
#include <limits>

#include "arch/x86_64/classify.h"
#include "arch/x86_64/optimize.h"
#include "arch/x86_64/regs.h"
#include "base/strings.h"

namespace dprobe::arch::x86_64 {
namespace {

constexpr int32_t kRedZone = 128;
constexpr int32_t kSlotBytes = 8;
// The longest displaced run: 4 bytes that are not yet a jump, then the longest instruction.
constexpr size_t kMaxDisplacedLength = kJumpLength - 1 + kMaxInsnLength;
constexpr size_t kJmpRel32Length = 5;
constexpr size_t kJccRel32Length = 6;
constexpr size_t kFarJumpLength = 14;  // jmp *0(%rip); .quad target
constexpr size_t kFarJccLength = 2 + kFarJumpLength;
constexpr size_t kPushReturnLength = 5 + 7 + 8;  // lea; movl (%rsp); movl 4(%rsp)
constexpr size_t kLiteralLength = 8;             // the ip literal

// What follows the save/call/restore code, at most: up to 4 bytes of earlier
// instructions (copied at their length), the last one's copy, the jump back
// where there is one, the ip literal. The last one's worst case is a call out
// of rel32 reach: 4 + 20 + 14 + 8 = 46; a 15-byte instruction with a far jump
// back is 4 + 15 + 14 + 8 = 41, a far jcc 4 + 16 + 14 + 8 = 42. With the
// save/call/restore code (displaced_copy_offset(), 150 bytes) that is 196 of
// kTrampolineSize's 256; write_trampoline checks it, a test measures it.
constexpr size_t kMaxTailLength = std::max({kJumpLength - 1 + kMaxInsnLength + kFarJumpLength,
                                            kJumpLength - 1 + kFarJccLength + kFarJumpLength,
                                            kJumpLength - 1 + kPushReturnLength + kFarJumpLength}) +
                                  kLiteralLength;

// Hardware register numbers of regs.h's general registers: the low 3 bits go
// in the opcode, bit 3 in REX.B.
constexpr uint8_t kHardwareNumber[] = {
    /*ax*/ 0, /*bx*/ 3, /*cx*/ 1, /*dx*/ 2, /*si*/ 6, /*di*/ 7,
    /*bp*/ 5, /*sp*/ 4, 8,        9,        10,       11,       12, 13, 14, 15};

bool is_gpr(Reg r) { return r <= kR15; }

bool fits_int32(int64_t value) {
  return value >= std::numeric_limits<int32_t>::min() &&
         value <= std::numeric_limits<int32_t>::max();
}

bool fits_int8(int64_t value) { return value >= -128 && value <= 127; }

// User addresses are below 2^47: the difference of two never overflows.
int64_t distance(uint64_t from, uint64_t to) { return static_cast<int64_t>(to - from); }

// Appends bytes to the trampoline; the caller checked the room.
class Emitter {
 public:
  explicit Emitter(std::span<uint8_t> out) : out_(out) {}

  void put(std::initializer_list<uint8_t> bytes) {
    for (uint8_t b : bytes) out_[pos_++] = b;
  }
  void put_le(uint64_t value, size_t size) {
    patch_le(pos_, value, size);
    pos_ += size;
  }
  void patch_le(size_t at, uint64_t value, size_t size) {
    for (size_t i = 0; i < size; ++i) out_[at + i] = static_cast<uint8_t>(value >> (8 * i));
  }
  size_t pos() const { return pos_; }

 private:
  std::span<uint8_t> out_;
  size_t pos_ = 0;
};

uint8_t low_byte(int64_t value) { return static_cast<uint8_t>(value & 0xff); }

// lea disp(%rsp),%rsp: moves rsp without touching the flags.
void lea_rsp(Emitter& e, int32_t disp) {
  if (fits_int8(disp)) {
    e.put({0x48, 0x8d, 0x64, 0x24, low_byte(disp)});
    return;
  }
  e.put({0x48, 0x8d, 0xa4, 0x24});
  e.put_le(static_cast<uint32_t>(disp), 4);
}

void push_or_pop_gpr(Emitter& e, Reg r, uint8_t opcode) {
  const uint8_t n = kHardwareNumber[r];
  if (n >= 8) e.put({0x41});  // REX.B
  e.put({static_cast<uint8_t>(opcode + (n & 7))});
}

// Pushes one slot's value; returns where a disp32 to the ip literal goes, or 0.
size_t push_slot(Emitter& e, Reg r) {
  switch (r) {
    case kFlags:
      e.put({0x9c});  // pushfq: before anything that changes them
      return 0;
    case kIp:
      e.put({0xff, 0x35});  // push qword ptr [rip+disp32]
      e.put_le(0, 4);
      return e.pos() - 4;
    default:
      push_or_pop_gpr(e, r, 0x50);
      return 0;
  }
}

// Steps over the red zone and the fixed slots (regs.h: left unwritten),
// then pushes the frame from flags down to ax; returns where the ip
// literal's disp32 is.
size_t push_frame(Emitter& e) {
  constexpr int32_t kFixedSlotBytes = kSlotBytes * (kRegCount - kFirstFixedSlot);
  lea_rsp(e, -(kRedZone + kFixedSlotBytes));
  size_t ip_disp = 0;
  for (int k = kFirstFixedSlot - 1; k >= 0; --k) {
    if (size_t at = push_slot(e, static_cast<Reg>(k)); at != 0) ip_disp = at;
  }
  // push %rsp stored rsp as it was before that push: below the red zone and
  // the slots after sp. addq $K, 8*kSp(%rsp) makes it the site's rsp.
  constexpr int32_t kSpBias = kRedZone + kSlotBytes * (kRegCount - 1 - kSp);
  e.put({0x48, 0x81, 0x44, 0x24, static_cast<uint8_t>(kSlotBytes * kSp)});
  e.put_le(static_cast<uint32_t>(kSpBias), 4);
  return ip_disp;
}

void call_handler(Emitter& e, const TrampolineSpec& spec) {
  e.put({0x48, 0x89, 0xe7});  // mov %rsp,%rdi
  e.put({0x48, 0xbe});        // movabs $cookie,%rsi
  e.put_le(spec.cookie, 8);
  e.put({0x48, 0x89, 0xe3});        // mov %rsp,%rbx
  e.put({0x48, 0x83, 0xe4, 0xf0});  // and $-16,%rsp
  e.put({0xfc});                    // cld
  e.put({0x48, 0xb8});              // movabs $handler,%rax
  e.put_le(spec.handler, 8);
  e.put({0xff, 0xd0});        // call *%rax
  e.put({0x48, 0x89, 0xdc});  // mov %rbx,%rsp
}

// The flags back from their slot, before the general registers are (rax
// and rdx serve meanwhile). popfq alone costs about 8 ns here, more than
// the rest of the save and restore: sahf gives back SF ZF AF PF CF, an add
// that overflows exactly when OF was set gives back OF, and std gives back
// DF (the handler ran with it clear). The trampoline changes no other
// flag. Without sahf, the slot is pushed and popped into the flags, and
// nops keep the length.
constexpr size_t kRestoreFlagsLength = 30;
void restore_flags(Emitter& e, bool sahf) {
  constexpr int32_t kFlagsSlot = kSlotBytes * kFlags;
  const size_t start = e.pos();
  if (!sahf) {
    e.put({0xff, 0xb4, 0x24});  // push disp32(%rsp)
    e.put_le(kFlagsSlot, 4);
    e.put({0x9d});  // popfq
    while (e.pos() - start < kRestoreFlagsLength) e.put({0x90});
    return;
  }
  e.put({0x48, 0x8b, 0x94, 0x24});  // mov disp32(%rsp),%rdx
  e.put_le(kFlagsSlot, 4);
  e.put({0xf7, 0xc2, 0x00, 0x04, 0x00, 0x00});  // test $0x400,%edx: DF
  e.put({0x74, 0x01});                          // jz over the std
  e.put({0xfd});                                // std
  e.put({0x89, 0xd0});                          // mov %edx,%eax
  e.put({0xc1, 0xe8, 0x0b});                    // shr $11,%eax: OF in bit 0
  e.put({0x83, 0xe0, 0x01});                    // and $1,%eax
  e.put({0x88, 0xd4});                          // mov %dl,%ah: SF ZF AF PF CF
  e.put({0x04, 0x7f});                          // add $0x7f,%al: overflows iff OF was set
  e.put({0x9e});                                // sahf
}

// Pops the general registers back from the frame, steps over the slots
// that are not restored (sp, ip, flags, segments, orig_ax) and the red zone.
void pop_frame(Emitter& e) {
  int32_t skip = 0;
  for (int k = 0; k < kRegCount; ++k) {
    const auto r = static_cast<Reg>(k);
    if (r == kSp || !is_gpr(r)) {
      skip += kSlotBytes;
      continue;
    }
    if (skip != 0) lea_rsp(e, skip);
    skip = 0;
    push_or_pop_gpr(e, r, 0x58);
  }
  lea_rsp(e, skip + kRedZone);
}

// Everything before the displaced copy; returns where the ip literal's disp32 is.
size_t emit_save_call_restore(Emitter& e, const TrampolineSpec& spec) {
  const size_t ip_disp = push_frame(e);
  call_handler(e, spec);
  restore_flags(e, spec.sahf);
  pop_frame(e);
  return ip_disp;
}

Result<void, std::string> check_plan(const OptimizePlan& plan) {
  if (plan.displaced.empty()) return unexpected(std::string("no displaced instructions"));
  uint64_t next = plan.address;
  for (const Insn& insn : plan.displaced) {
    if (insn.address != next)
      return unexpected("displaced instructions not contiguous at " + hex(next));
    next += insn.length;
  }
  if (next - plan.address != plan.displaced_length || plan.displaced_length < kJumpLength ||
      plan.displaced_length > kMaxDisplacedLength) {
    return unexpected("bad displaced length " + std::to_string(plan.displaced_length));
  }
  return {};
}

// jmp *0(%rip); .quad to: kFarJumpLength bytes, any distance.
void far_jump(Emitter& e, uint64_t to) {
  e.put({0xff, 0x25, 0x00, 0x00, 0x00, 0x00});  // jmp qword ptr [rip+0]: the next 8 bytes
  e.put_le(to, 8);
}

// A jump, emitted at e.pos() of the trampoline at `trampoline`, to `to`:
// jmp rel32 when in reach, else the far jump.
void jump_to(Emitter& e, uint64_t trampoline, uint64_t to) {
  const int64_t rel = distance(trampoline + e.pos() + kJmpRel32Length, to);
  if (!fits_int32(rel)) return far_jump(e, to);
  e.put({0xe9});
  e.put_le(static_cast<uint64_t>(rel), 4);
}

// jcc to `to`: 0f 80+cc rel32 when in reach; else the inverted condition
// (cc ^ 1: the Intel condition codes come in complementary pairs) jumps over
// an absolute jmp that is taken when cc holds.
void jcc_to(Emitter& e, uint64_t trampoline, uint8_t cc, uint64_t to) {
  const int64_t rel = distance(trampoline + e.pos() + kJccRel32Length, to);
  if (fits_int32(rel)) {
    e.put({0x0f, static_cast<uint8_t>(0x80 | cc)});
    e.put_le(static_cast<uint64_t>(rel), 4);
    return;
  }
  // j!cc rel8 over the far jump, always the 14-byte form (the rel8 counts on it).
  e.put({static_cast<uint8_t>(0x70 | (cc ^ 1)), static_cast<uint8_t>(kFarJumpLength)});
  far_jump(e, to);
}

// call to `to` with the original return address: the callee sees the stack,
// the registers and the flags the original call would have left. lea moves rsp
// without touching the flags, and moves it first: the slot the movs fill is
// then above rsp, where no signal frame can be pushed. (Under a user shadow
// stack the callee's ret would not match it; Linux enables none by default.)
void call_to(Emitter& e, uint64_t trampoline, uint64_t return_address, uint64_t to) {
  lea_rsp(e, -kSlotBytes);          // lea -8(%rsp),%rsp
  e.put({0xc7, 0x04, 0x24});        // movl $imm32,(%rsp)
  e.put_le(return_address, 4);      //   the low half
  e.put({0xc7, 0x44, 0x24, 0x04});  // movl $imm32,4(%rsp)
  e.put_le(return_address >> 32, 4);
  jump_to(e, trampoline, to);
}

// The last displaced instruction, a direct branch, re-encoded to reach the
// same target from the trampoline; whether the jump back must follow (only
// a jcc falls through).
bool relocate_branch(Emitter& e, const OptimizePlan& plan, const TrampolineSpec& spec,
                     const Classified& c) {
  switch (c.branch) {
    case Branch::kJcc:
      jcc_to(e, spec.address, c.cond, c.target);
      return true;
    case Branch::kJmpRel:
      jump_to(e, spec.address, c.target);
      return false;
    default:  // Branch::kCallRel, checked by the caller
      call_to(e, spec.address, plan.address + plan.displaced_length, c.target);
      return false;
  }
}

bool relocatable_branch(Branch b) {
  return b == Branch::kJcc || b == Branch::kJmpRel || b == Branch::kCallRel || b == Branch::kRet;
}

// The displaced instructions, each at the same offset from the copy's start as
// from the probe address (fixing a disp32 keeps every length; only the last,
// a relocated branch, may change length). Returns whether the jump back must
// follow.
Result<bool, std::string> copy_displaced(Emitter& e, const OptimizePlan& plan,
                                         const TrampolineSpec& spec) {
  for (const Insn& insn : plan.displaced) {
    const Classified c = classify_insn(insn);
    if (c.branch != Branch::kNone) {
      if (!relocatable_branch(c.branch) || &insn != &plan.displaced.back()) {
        return unexpected("the branch at " + hex(insn.address) +
                          " is not a direct jcc, jmp, call or a ret ending the displaced "
                          "instructions");
      }
      if (c.branch == Branch::kRet) {
        // Where the stack says, from here as from there: nothing follows it.
        for (size_t i = 0; i < insn.length; ++i) e.put({insn.bytes[i]});
        return false;
      }
      return relocate_branch(e, plan, spec, c);
    }
    const size_t start = e.pos();
    for (size_t i = 0; i < insn.length; ++i) e.put({insn.bytes[i]});
    if (!c.rip_relative) continue;
    const int64_t disp = distance(spec.address + start + insn.length, c.rip_target);
    if (!fits_int32(disp)) {
      return unexpected("the instruction at " + hex(insn.address) + " refers to " +
                        hex(c.rip_target) + ", beyond disp32 reach of the trampoline at " +
                        hex(spec.address));
    }
    e.patch_le(start + c.disp_offset, static_cast<uint64_t>(disp), 4);
  }
  return true;
}

}  // namespace

// The code before the copy has one length whatever the plan and spec
// (absolute addresses are always movabs, the ip always a literal): measure it once.
size_t displaced_copy_offset() {
  static const size_t offset = [] {
    std::array<uint8_t, kTrampolineSize> scratch{};
    Emitter e(scratch);
    emit_save_call_restore(e, TrampolineSpec{});
    return e.pos();
  }();
  return offset;
}

Result<size_t, std::string> write_trampoline(const OptimizePlan& plan, const TrampolineSpec& spec,
                                             std::span<uint8_t> out) {
  if (out.size() < kTrampolineSize) {
    return unexpected("the trampoline buffer holds " + std::to_string(out.size()) +
                      " bytes, needs " + std::to_string(kTrampolineSize));
  }
  if (auto ok = check_plan(plan); !ok) return unexpected(ok.error());
  if (displaced_copy_offset() + kMaxTailLength > kTrampolineSize) {  // the worst case must fit
    return unexpected("a trampoline may need " +
                      std::to_string(displaced_copy_offset() + kMaxTailLength) + " bytes, has " +
                      std::to_string(kTrampolineSize));
  }
  Emitter e(out);
  const size_t ip_disp = emit_save_call_restore(e, spec);
  auto falls_through = copy_displaced(e, plan, spec);
  if (!falls_through) return unexpected(falls_through.error());
  if (*falls_through) jump_to(e, spec.address, plan.address + plan.displaced_length);
  // The ip literal; the push's disp32 counts from the end of that push.
  e.patch_le(ip_disp, e.pos() - (ip_disp + 4), 4);
  e.put_le(plan.address, 8);
  return e.pos();
}

// The copy of displaced[i] starts at the copy's start + (its address - the
// probe address): relocation rewrites a disp32 in place, keeping the length,
// and only the last displaced instruction (a relocated branch) may get a copy
// of another length, which moves no copy's start.
std::optional<uint64_t> trampoline_offset_of(const OptimizePlan& plan, uint64_t pc) {
  for (size_t i = 1; i < plan.displaced.size(); ++i) {
    if (plan.displaced[i].address == pc) return displaced_copy_offset() + (pc - plan.address);
  }
  return std::nullopt;
}

// Every copy but the last keeps its length, so an offset before the last
// copy's start maps as before. An offset at or past it maps to an address at
// or past the last instruction's: only its start itself is a displaced
// instruction, and the re-encoded branch's first instruction there has done
// nothing yet (no flag, register or rsp changed), so the original pc is
// exact. Anywhere further in a longer copy (after the call sequence's lea, in
// the far jcc's absolute jmp) maps inside the last instruction or past the
// range, where no displaced instruction starts: nullopt, as it must be, since
// no original pc matches a half-done sequence. A shorter copy (a dropped
// prefix) puts the jump back at a mapped address inside the last instruction
// or at the range's end: nullopt too.
std::optional<uint64_t> original_pc_of(const OptimizePlan& plan, uint64_t trampoline_offset) {
  const size_t start = displaced_copy_offset();
  if (trampoline_offset < start) return std::nullopt;
  const uint64_t pc = plan.address + (trampoline_offset - start);
  for (const Insn& insn : plan.displaced) {
    if (insn.address == pc) return pc;
  }
  return std::nullopt;
}

namespace {

// The instructions before a site's syscall, each at its own offset.
Result<void, std::string> copy_before_syscall(Emitter& e, const OptimizePlan& plan,
                                              uint64_t trampoline) {
  for (size_t i = 0; i + 1 < plan.displaced.size(); ++i) {
    const Insn& insn = plan.displaced[i];
    const Classified c = classify_insn(insn);
    if (c.branch != Branch::kNone) {
      return unexpected("the branch at " + hex(insn.address) + " is before the system call");
    }
    const size_t start = e.pos();
    for (size_t b = 0; b < insn.length; ++b) e.put({insn.bytes[b]});
    if (!c.rip_relative) continue;
    const int64_t disp = distance(trampoline + start + insn.length, c.rip_target);
    if (!fits_int32(disp)) {
      return unexpected("the instruction at " + hex(insn.address) + " refers to " +
                        hex(c.rip_target) + ", beyond disp32 reach of the trampoline at " +
                        hex(trampoline));
    }
    e.patch_le(start + c.disp_offset, static_cast<uint64_t>(disp), 4);
  }
  return {};
}

}  // namespace

Result<size_t, std::string> write_syscall_trampoline(const OptimizePlan& plan,
                                                     const SyscallTrampolineSpec& spec,
                                                     std::span<uint8_t> out,
                                                     std::span<uint8_t> gadget) {
  if (spec.gadget != 0 && gadget.size() < kSyscallGadgetSize) {
    return unexpected(std::string("no room for the gadget's bytes"));
  }
  if (out.size() < kSyscallTrampolineSize) {
    return unexpected("the trampoline buffer holds " + std::to_string(out.size()) +
                      " bytes, needs " + std::to_string(kSyscallTrampolineSize));
  }
  if (auto ok = check_plan(plan); !ok) return unexpected(ok.error());
  const Insn& last = plan.displaced.back();
  if (last.length != 2 || last.bytes[0] != 0x0f || last.bytes[1] != 0x05) {
    return unexpected(std::string("the displaced instructions do not end with a syscall"));
  }
  Emitter e(out);
  if (auto copied = copy_before_syscall(e, plan, spec.address); !copied) {
    return unexpected(copied.error());
  }
  const uint64_t links = spec.address + kSyscallLinksOffset;
  const size_t enter_ip = emit_save_call_restore(e, {spec.address, spec.enter, links, spec.sahf});
  e.put({0xff, 0xe1});  // jmp *%rcx: where enter sent the call
  const uint64_t plain = spec.address + e.pos();
  e.put({0x0f, 0x05});  // syscall
  const uint64_t exit_at = spec.address + e.pos();
  const size_t exit_ip = emit_save_call_restore(e, {spec.address, spec.exit, links, spec.sahf});
  jump_to(e, spec.address, plan.address + plan.displaced_length);
  if (e.pos() > kSyscallLinksOffset) {
    return unexpected("the trampoline's code takes " + std::to_string(e.pos()) +
                      " bytes, more than " + std::to_string(kSyscallLinksOffset));
  }
  while (e.pos() < kSyscallLinksOffset) e.put({0xcc});  // never run
  // Both frames' ip: the syscall's address, the links' first word.
  e.patch_le(enter_ip, kSyscallLinksOffset - (enter_ip + 4), 4);
  e.patch_le(exit_ip, kSyscallLinksOffset - (exit_ip + 4), 4);
  constexpr uint64_t kSecondGadget = kSyscallGadgetSize / 2;
  e.put_le(spec.site, 8);
  e.put_le(spec.gadget != 0 ? spec.gadget : plain, 8);
  e.put_le(plain, 8);
  e.put_le(spec.gadget != 0 ? spec.gadget + kSecondGadget : 0, 8);
  if (spec.gadget != 0) {
    Emitter g(gadget);
    g.put({0x0f, 0x05});   // syscall
    far_jump(g, exit_at);  // its address at kSyscallGadgetWayBack, which the agent reads
    g.put({0x0f, 0x05});   // syscall
    far_jump(g, plan.address + plan.displaced_length);
  }
  return e.pos();
}

std::array<uint8_t, kJumpLength> site_jump(uint64_t site, uint64_t trampoline) {
  const int64_t rel = distance(site + kJumpLength, trampoline);
  assert(fits_int32(rel));
  const auto bits = static_cast<uint32_t>(rel);
  return {0xe9, static_cast<uint8_t>(bits), static_cast<uint8_t>(bits >> 8),
          static_cast<uint8_t>(bits >> 16), static_cast<uint8_t>(bits >> 24)};
}

}  // namespace dprobe::arch::x86_64
