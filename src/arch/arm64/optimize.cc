// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/arm64/optimize.h"

#include <cstdio>
#include <vector>

#include "arch/arm64/encode.h"
#include "arch/arm64/regs.h"
#include "base/strings.h"

namespace dprobe::arch::arm64 {
namespace {

constexpr uint32_t kFrameBytes = sizeof(SavedRegs);
static_assert(kFrameBytes % 16 == 0, "sp stays 16-byte aligned below the frame");
constexpr int32_t kSpOffset = 8 * kSp;
constexpr uint32_t kPstateOffset = 8 * kPstate;
static_assert(kSpOffset + 8 == 8 * int32_t{kPc}, "sp and pc are stored by one stp");

constexpr uint32_t kX0 = 0;
constexpr uint32_t kX1 = 1;
constexpr uint32_t kIp0 = 16;  // x16: the handler's address; restored after
constexpr uint32_t kSpReg = 31;

// The trampoline's words, then its 8-byte literals after them.
class Emitter {
 public:
  explicit Emitter(uint64_t address) : address_(address) {}

  void put(uint32_t word) { words_.push_back(word); }
  // LDR Xt of a literal holding `value`.
  void load(uint32_t rt, uint64_t value) {
    loads_.push_back({words_.size(), literals_.size()});
    literals_.push_back(value);
    put(encode::ldr_literal_x(rt, 0));
  }
  // Where the next word goes.
  uint64_t here() const { return address_ + 4 * words_.size(); }
  size_t offset() const { return 4 * words_.size(); }

  // The words, the literals 8-byte aligned after them; the size, or 0 when
  // it does not fit.
  size_t finish(std::span<uint8_t> out) {
    if (words_.size() % 2 != 0) put(encode::kNop);
    const size_t literals = 4 * words_.size();
    for (const Load& l : loads_) {
      const auto distance = static_cast<int64_t>(literals + 8 * l.literal - 4 * l.word);
      words_[l.word] = encode::ldr_literal_x(words_[l.word] & 0x1f, distance);
    }
    const size_t size = literals + 8 * literals_.size();
    if (size > out.size()) return 0;
    for (size_t i = 0; i < words_.size(); ++i) encode::put_word(out, 4 * i, words_[i]);
    for (size_t i = 0; i < literals_.size(); ++i) {
      encode::put_quad(out, literals + 8 * i, literals_[i]);
    }
    return size;
  }

 private:
  struct Load {
    size_t word;
    size_t literal;
  };
  uint64_t address_;
  std::vector<uint32_t> words_;
  std::vector<Load> loads_;
  std::vector<uint64_t> literals_;
};

// Saves the frame, calls handler(frame, cookie), restores it.
void save_call_restore(Emitter& e, const TrampolineSpec& spec, uint64_t probe) {
  e.put(encode::sub_imm(kSpReg, kSpReg, kFrameBytes));
  for (uint32_t r = 0; r < 30; r += 2)
    e.put(encode::stp_x(r, r + 1, kSpReg, static_cast<int32_t>(8 * r)));
  e.put(encode::str_x(kLr, kSpReg, 8 * kLr));
  e.put(encode::add_imm(kX0, kSpReg, kFrameBytes));  // the probe's sp
  e.load(kX1, probe);
  e.put(encode::stp_x(kX0, kX1, kSpReg, kSpOffset));
  e.put(encode::mrs_nzcv(kX0));
  e.put(encode::str_x(kX0, kSpReg, kPstateOffset));
  e.put(encode::add_imm(kX0, kSpReg, 0));  // mov x0, sp
  e.load(kX1, spec.cookie);
  e.load(kIp0, spec.handler);
  e.put(encode::blr(kIp0));
  e.put(encode::ldr_x(kX0, kSpReg, kPstateOffset));
  e.put(encode::msr_nzcv(kX0));
  for (uint32_t r = 0; r < 30; r += 2)
    e.put(encode::ldp_x(r, r + 1, kSpReg, static_cast<int32_t>(8 * r)));
  e.put(encode::ldr_x(kLr, kSpReg, 8 * kLr));
  e.put(encode::add_imm(kSpReg, kSpReg, kFrameBytes));
}

Unexpected<std::string> out_of_reach(const char* what, uint64_t to, uint64_t from) {
  return unexpected(std::string(what) + " " + hex(to) +
                    " is beyond B's reach of the trampoline at " + hex(from));
}

// B to `to`, or when it is out of reach the jump through x16 (only where
// the program's own branch may clobber it: a call or a tail call).
void far_branch(Emitter& e, uint64_t to) {
  if (encode::within_b_reach(e.here(), to)) return e.put(encode::b(e.here(), to));
  e.load(kIp0, to);
  e.put(encode::br(kIp0));
}

Result<void, std::string> near_branch(Emitter& e, uint64_t to, const char* what) {
  if (!encode::within_b_reach(e.here(), to)) return out_of_reach(what, to, e.here());
  e.put(encode::b(e.here(), to));
  return {};
}

// A conditional branch taken to +8: B back (not taken), B target (taken).
Result<void, std::string> conditional(Emitter& e, uint32_t skipping, uint64_t next,
                                      uint64_t target) {
  e.put(skipping);
  if (auto back = near_branch(e, next, "the probe's next instruction"); !back) return back;
  return near_branch(e, target, "the branch target");
}

// What the instruction does, from the trampoline; whether it falls through
// to the instruction after the probe.
Result<bool, std::string> relocate(Emitter& e, const ProbeInsn& insn) {
  const Decoded& d = insn.decoded;
  const uint64_t next = insn.address + kInsnBytes;
  const uint64_t target = insn.address + static_cast<uint64_t>(d.offset);
  Result<void, std::string> done;
  switch (d.op) {
    case Op::kNone:  // stepped out of line
      e.put(insn.word);
      return true;
    case Op::kBl:
      e.load(kLr, next);
      [[fallthrough]];
    case Op::kB:
      far_branch(e, target);
      return false;
    case Op::kBCond:
    case Op::kCbz:
    case Op::kCbnz:
      done = conditional(e, encode::with_imm19(insn.word, 8), next, target);
      break;
    case Op::kTbz:
    case Op::kTbnz:
      done = conditional(e, encode::with_imm14(insn.word, 8), next, target);
      break;
    case Op::kAdr:
    case Op::kAdrp: {
      const uint64_t base = d.op == Op::kAdrp ? insn.address & ~uint64_t{0xfff} : insn.address;
      if (d.reg != 31) e.load(d.reg, base + static_cast<uint64_t>(d.offset));  // 31: xzr
      return true;
    }
    case Op::kLdrLiteral:
    case Op::kLdrswLiteral:
      e.load(d.reg, target);
      e.put(literal_load_from(d, d.reg));
      return true;
    case Op::kPrfmLiteral:
      return true;
    case Op::kBr:
    case Op::kRet:
      e.put(insn.word);
      return false;
    case Op::kBlr:
      return unexpected(std::string("a BLR would link to the trampoline"));
  }
  if (!done) return unexpected(done.error());
  return false;  // a conditional branch's two ways are both written
}

}  // namespace

Result<OptimizePlan, std::string> can_optimize(const ProbeInsn& insn) {
  if (!can_probe(insn.decoded)) return unexpected(std::string(insn.decoded.reason));
  if (insn.decoded.op == Op::kBlr) {
    return unexpected(std::string(
        "a BLR would link to the trampoline, and a BR in its place may not land on BTI C"));
  }
  return OptimizePlan{insn};
}

size_t displaced_copy_offset() {
  static const size_t offset = [] {
    Emitter e(0);
    save_call_restore(e, TrampolineSpec{}, 0);
    return e.offset();
  }();
  return offset;
}

Result<size_t, std::string> write_trampoline(const OptimizePlan& plan, const TrampolineSpec& spec,
                                             std::span<uint8_t> out) {
  const ProbeInsn& insn = plan.insn;
  if (spec.address % kInsnBytes != 0)
    return unexpected("misaligned trampoline " + hex(spec.address));
  if (!encode::within_b_reach(insn.address, spec.address)) {
    return unexpected("the trampoline at " + hex(spec.address) + " is beyond B's reach of " +
                      hex(insn.address));
  }
  Emitter e(spec.address);
  save_call_restore(e, spec, insn.address);
  auto falls_through = relocate(e, insn);
  if (!falls_through) return unexpected(falls_through.error());
  if (*falls_through) {
    if (auto back = near_branch(e, insn.address + kInsnBytes, "the probe's next instruction");
        !back) {
      return unexpected(back.error());
    }
  }
  const size_t size = e.finish(out);
  if (size == 0) {
    return unexpected("the trampoline needs more than the " + std::to_string(out.size()) +
                      " bytes given");
  }
  return size;
}

uint32_t site_branch(uint64_t site, uint64_t trampoline) { return encode::b(site, trampoline); }

}  // namespace dprobe::arch::arm64
