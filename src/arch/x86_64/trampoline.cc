// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The trampoline of a jump-optimized probe (optimize.h), byte by byte:
//
//   lea   -128(%rsp),%rsp        ; step over the program's red zone
//   push  $-1 ... pushfq ...     ; the SavedRegs frame, pushed from its last
//   push  rip_literal(%rip)      ;   slot (orig_ax) down to its first (ax), so
//   push  %r15 ... push %rax     ;   slot k ends at frame + 8k
//   addq  $K,56(%rsp)            ; push %rsp stored rsp before that push: make it the site's
//   mov   %rsp,%rdi              ; the frame
//   movabs $cookie,%rsi
//   mov   %rsp,%rbx              ; callee-saved: the unaligned rsp
//   and   $-16,%rsp
//   cld                          ; the ABI's direction flag for the handler
//   movabs $handler,%rax
//   call  *%rax
//   mov   %rbx,%rsp
//   pop   %rax ... popfq         ; back from the frame, skipping sp, ip, segments
//   lea   184(%rsp),%rsp         ; the segment slots and the red zone at once
//   <displaced instructions>     ; RIP-relative disp32 retargeted
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

namespace dprobe::arch::x86_64 {
namespace {

constexpr int32_t kRedZone = 128;
constexpr int32_t kSlotBytes = 8;
// The longest displaced run: 4 bytes that are not yet a jump, then the longest instruction.
constexpr size_t kMaxDisplacedLength = kJumpLength - 1 + kMaxInsnLength;
constexpr size_t kJmpRel32Length = 5;

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

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

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
    case kOrigAx:
      e.put({0x6a, 0xff});  // push $-1: not in a system call
      return 0;
    case kCs:
      e.put({0x6a, 0x33});  // the 64-bit user code segment
      return 0;
    case kSs:
      e.put({0x6a, 0x2b});  // the user data segment
      return 0;
    case kDs:
    case kEs:
    case kFs:
    case kGs:
      e.put({0x6a, 0x00});
      return 0;
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

// The frame from orig_ax down to ax; returns where the ip literal's disp32 is.
size_t push_frame(Emitter& e) {
  size_t ip_disp = 0;
  for (int k = kRegCount - 1; k >= 0; --k) {
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

// Pops the general registers and flags back from the frame, steps over the
// slots that are not restored (sp, ip, segments, orig_ax) and the red zone.
void pop_frame(Emitter& e) {
  int32_t skip = 0;
  for (int k = 0; k < kRegCount; ++k) {
    const auto r = static_cast<Reg>(k);
    if (r == kSp || (!is_gpr(r) && r != kFlags)) {
      skip += kSlotBytes;
      continue;
    }
    if (skip != 0) lea_rsp(e, skip);
    skip = 0;
    if (r == kFlags) {
      e.put({0x9d});  // popfq
    } else {
      push_or_pop_gpr(e, r, 0x58);
    }
  }
  lea_rsp(e, skip + kRedZone);
}

// Everything before the displaced copy; returns where the ip literal's disp32 is.
size_t emit_save_call_restore(Emitter& e, const TrampolineSpec& spec) {
  lea_rsp(e, -kRedZone);
  const size_t ip_disp = push_frame(e);
  call_handler(e, spec);
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

// The displaced instructions, each at the same offset from the copy's start as
// from the probe address (fixing a disp32 keeps every length).
Result<void, std::string> copy_displaced(Emitter& e, const OptimizePlan& plan,
                                         const TrampolineSpec& spec) {
  for (const Insn& insn : plan.displaced) {
    const size_t start = e.pos();
    for (size_t i = 0; i < insn.length; ++i) e.put({insn.bytes[i]});
    const Classified c = classify_insn(insn);
    if (!c.rip_relative) continue;
    const int64_t disp = distance(spec.address + start + insn.length, c.rip_target);
    if (!fits_int32(disp)) {
      return unexpected("the instruction at " + hex(insn.address) + " refers to " +
                        hex(c.rip_target) + ", beyond disp32 reach of the trampoline at " +
                        hex(spec.address));
    }
    e.patch_le(start + c.disp_offset, static_cast<uint64_t>(disp), 4);
  }
  return {};
}

void jump_back(Emitter& e, uint64_t from, uint64_t to) {
  const int64_t rel = distance(from + kJmpRel32Length, to);
  if (fits_int32(rel)) {
    e.put({0xe9});
    e.put_le(static_cast<uint64_t>(rel), 4);
    return;
  }
  e.put({0xff, 0x25, 0x00, 0x00, 0x00, 0x00});  // jmp qword ptr [rip+0]: the next 8 bytes
  e.put_le(to, 8);
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
  Emitter e(out);
  const size_t ip_disp = emit_save_call_restore(e, spec);
  if (auto ok = copy_displaced(e, plan, spec); !ok) return unexpected(ok.error());
  jump_back(e, spec.address + e.pos(), plan.address + plan.displaced_length);
  // The ip literal; the push's disp32 counts from the end of that push.
  e.patch_le(ip_disp, e.pos() - (ip_disp + 4), 4);
  e.put_le(plan.address, 8);
  return e.pos();
}

// The copy of displaced[i] starts at the copy's start + (its address - the
// probe address): relocation only rewrites a disp32 in place, so every copy
// keeps its length.
std::optional<uint64_t> trampoline_offset_of(const OptimizePlan& plan, uint64_t pc) {
  for (size_t i = 1; i < plan.displaced.size(); ++i) {
    if (plan.displaced[i].address == pc) return displaced_copy_offset() + (pc - plan.address);
  }
  return std::nullopt;
}

std::optional<uint64_t> original_pc_of(const OptimizePlan& plan, uint64_t trampoline_offset) {
  const size_t start = displaced_copy_offset();
  if (trampoline_offset < start) return std::nullopt;
  const uint64_t pc = plan.address + (trampoline_offset - start);
  for (const Insn& insn : plan.displaced) {
    if (insn.address == pc) return pc;
  }
  return std::nullopt;
}

std::array<uint8_t, kJumpLength> site_jump(uint64_t site, uint64_t trampoline) {
  const int64_t rel = distance(site + kJumpLength, trampoline);
  assert(fits_int32(rel));
  const auto bits = static_cast<uint32_t>(rel);
  return {0xe9, static_cast<uint8_t>(bits), static_cast<uint8_t>(bits >> 8),
          static_cast<uint8_t>(bits >> 16), static_cast<uint8_t>(bits >> 24)};
}

}  // namespace dprobe::arch::x86_64
