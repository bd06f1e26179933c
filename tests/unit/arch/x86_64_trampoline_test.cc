// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The x86_64 trampolines the jump optimizer writes, decoded: what they
// save and restore, where the displaced copy sits, the jump back, and the
// displaced branches relocated.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "arch/x86_64/classify.h"
#include "arch/x86_64/optimize.h"
#include "arch/x86_64/regs.h"
#include "unit/arch/x86_64_optimize_cases.h"

namespace dprobe::arch::x86_64 {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;

// back (what follows is data: the far jump's target, the ip literal).
std::vector<Insn> decode_until_jump_back(std::span<const uint8_t> bytes, uint64_t address) {
  std::vector<Insn> out;
  size_t offset = 0;
  while (offset < bytes.size()) {
    auto insn = decode_insn(bytes.subspan(offset), address + offset);
    EXPECT_TRUE(insn) << insn.error();
    if (!insn) break;
    out.push_back(*insn);
    offset += insn->length;
    const Branch b = classify_insn(*insn).branch;
    if (b == Branch::kJmpRel || b == Branch::kJmpIndirect) break;
  }
  return out;
}

uint64_t read_le64(std::span<const uint8_t> bytes, size_t at) {
  uint64_t value = 0;
  std::memcpy(&value, bytes.data() + at, sizeof(value));
  return value;
}

struct Trampoline {
  std::array<uint8_t, kTrampolineSize> bytes{};
  size_t size = 0;
  std::vector<Insn> code;
  size_t end_of_code = 0;
};

Trampoline write(const OptimizePlan& plan, const TrampolineSpec& spec) {
  Trampoline t;
  auto n = write_trampoline(plan, spec, t.bytes);
  EXPECT_TRUE(n) << n.error();
  if (!n) return t;
  t.size = *n;
  t.code = decode_until_jump_back(std::span(t.bytes).first(t.size), spec.address);
  if (!t.code.empty()) t.end_of_code = t.code.back().address + t.code.back().length - spec.address;
  return t;
}

constexpr TrampolineSpec kNear = {0x402000, 0x7f1234560000, 0xc0ffee};

TEST(X86OptimizeTrampoline, DecodesBackWithoutVectorInstructions) {
  auto plan = analyze(kClassicEntry, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  Trampoline t = write(*plan, kNear);
  ASSERT_FALSE(t.code.empty());
  std::string listing;
  for (const Insn& insn : t.code) {
    listing += disassemble(insn) + "\n";
    EXPECT_FALSE(touches_extended_state(insn)) << disassemble(insn);
  }
  // Code, then only the 8-byte ip literal: every byte of code decoded.
  ASSERT_EQ(t.size, t.end_of_code + 8) << listing;
  EXPECT_EQ(read_le64(t.bytes, t.end_of_code), kFunction) << "the ip literal";
  EXPECT_LE(t.size, kTrampolineSize);
  // The red zone and the fixed slots (cs..orig_ax, never pushed) are stepped
  // over first, the handler called through movabs.
  EXPECT_THAT(disassemble(t.code.front()), HasSubstr("lea rsp, [rsp-0xb8]"));
  EXPECT_THAT(listing, Not(HasSubstr("push 0x33"))) << "the cs slot is the hit's to fill";
  EXPECT_THAT(listing, HasSubstr("mov rsi, 0xc0ffee"));
  EXPECT_THAT(listing, HasSubstr("mov rax, 0x7f1234560000"));
  EXPECT_THAT(listing, HasSubstr("call rax"));
  // The ip slot is pushed from the literal.
  int literal_readers = 0;
  for (const Insn& insn : t.code) {
    Classified c = classify_insn(insn);
    if (c.rip_relative && c.rip_target == kNear.address + t.end_of_code) ++literal_readers;
  }
  EXPECT_EQ(literal_readers, 1) << listing;
}

// The flags come back by sahf, an add for OF and std for DF (popfq alone
// costs more than the rest of the save and restore); on a CPU without
// sahf in 64-bit mode by popfq, padded: the copy starts at the same offset.
TEST(X86OptimizeTrampoline, FlagsComeBackBySahfOrPopfqAndTheCopyStartsAtTheSameOffset) {
  auto plan = analyze(kClassicEntry, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  TrampolineSpec old_cpu = kNear;
  old_cpu.sahf = false;
  const Trampoline fast = write(*plan, kNear);
  const Trampoline slow = write(*plan, old_cpu);
  std::string fast_listing;
  std::string slow_listing;
  for (const Insn& insn : fast.code) fast_listing += disassemble(insn) + "\n";
  for (const Insn& insn : slow.code) slow_listing += disassemble(insn) + "\n";
  EXPECT_THAT(fast_listing, HasSubstr("sahf")) << fast_listing;
  EXPECT_THAT(fast_listing, HasSubstr("std")) << fast_listing;
  EXPECT_THAT(fast_listing, Not(HasSubstr("popfq"))) << fast_listing;
  EXPECT_THAT(slow_listing, HasSubstr("popfq")) << slow_listing;
  EXPECT_THAT(slow_listing, Not(HasSubstr("sahf"))) << slow_listing;
  ASSERT_EQ(fast.size, slow.size);
  const size_t copy = displaced_copy_offset();
  EXPECT_TRUE(std::equal(fast.bytes.begin() + copy, fast.bytes.begin() + fast.size,
                         slow.bytes.begin() + copy));
}

TEST(X86OptimizeTrampoline, DisplacedCopySitsWhereTrampolineOffsetOfSays) {
  auto plan = analyze(kClassicEntry, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  Trampoline t = write(*plan, kNear);
  auto second = trampoline_offset_of(*plan, 0x401001);
  auto third = trampoline_offset_of(*plan, 0x401004);
  ASSERT_TRUE(second && third);
  // Every copy keeps its length: the copy of displaced[i] is at start + (its address - probe).
  const uint64_t start = *second - 1;
  EXPECT_EQ(start, displaced_copy_offset());
  EXPECT_EQ(*third, start + 4);
  EXPECT_THAT(std::span(t.bytes).subspan(start, 8),
              ElementsAreArray({0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10}));
  // ... and starts an instruction of the decoded trampoline.
  std::vector<uint64_t> starts;
  for (const Insn& insn : t.code) starts.push_back(insn.address - kNear.address);
  EXPECT_THAT(starts, ::testing::IsSupersetOf({start, start + 1, start + 4, start + 8}));
  // Not the probe itself (a thread there has run nothing yet), nor mid-instruction or past.
  EXPECT_FALSE(trampoline_offset_of(*plan, 0x401000));
  EXPECT_FALSE(trampoline_offset_of(*plan, 0x401002));
  EXPECT_FALSE(trampoline_offset_of(*plan, 0x401008));
  // The reverse, for a fault in the copy: every copied instruction, the first included.
  EXPECT_EQ(original_pc_of(*plan, start), 0x401000u);
  EXPECT_EQ(original_pc_of(*plan, start + 1), 0x401001u);
  EXPECT_EQ(original_pc_of(*plan, start + 4), 0x401004u);
  EXPECT_FALSE(original_pc_of(*plan, start + 2));
  EXPECT_FALSE(original_pc_of(*plan, start + 8));  // the jump back
  EXPECT_FALSE(original_pc_of(*plan, 0));
}

TEST(X86OptimizeTrampoline, JumpsBackWithRel32WhenInReach) {
  auto plan = analyze(kClassicEntry, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  Trampoline t = write(*plan, kNear);
  ASSERT_FALSE(t.code.empty());
  const Insn& back = t.code.back();
  EXPECT_EQ(back.bytes[0], 0xe9);
  EXPECT_EQ(back.length, 5);
  Classified c = classify_insn(back);
  EXPECT_EQ(c.branch, Branch::kJmpRel);
  EXPECT_EQ(c.target, 0x401008u);
}

TEST(X86OptimizeTrampoline, JumpsBackThroughAnAbsoluteAddressWhenFar) {
  auto plan = analyze(kClassicEntry, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  const TrampolineSpec far = {kFunction + (3ull << 30), 0x7f1234560000, 1};
  Trampoline t = write(*plan, far);
  ASSERT_FALSE(t.code.empty());
  // jmp qword ptr [rip+0]; .quad 0x401008; then the ip literal.
  const Insn& back = t.code.back();
  EXPECT_THAT(std::span(back.bytes).first(back.length),
              ElementsAreArray({0xff, 0x25, 0x00, 0x00, 0x00, 0x00}));
  Classified c = classify_insn(back);
  EXPECT_EQ(c.branch, Branch::kJmpIndirect);
  EXPECT_EQ(c.rip_target, far.address + t.end_of_code);
  EXPECT_EQ(read_le64(t.bytes, t.end_of_code), 0x401008u);
  EXPECT_EQ(read_le64(t.bytes, t.end_of_code + 8), kFunction);
  EXPECT_EQ(t.size, t.end_of_code + 16);
}

// 0x401000: 48 8b 05 f9 0f 00 00 mov rax, [rip+0xff9] = [0x402000]
// 0x401007: 48 01 f8             add rax, rdi
// 0x40100a: c3                   ret
const Bytes kRipLoad = {0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00, 0x48, 0x01, 0xf8, 0xc3};

TEST(X86OptimizeTrampoline, RipRelativeDisplacedInstructionKeepsItsTarget) {
  auto plan = analyze(kRipLoad, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  ASSERT_EQ(plan->displaced_length, 7);
  const TrampolineSpec spec = {0x500000, 0x7f1234560000, 1};
  Trampoline t = write(*plan, spec);
  ASSERT_GE(t.code.size(), 2u);
  const Insn& copy = t.code[t.code.size() - 2];
  EXPECT_EQ(copy.length, 7);
  Classified c = classify_insn(copy);
  EXPECT_TRUE(c.rip_relative);
  EXPECT_EQ(c.rip_target, 0x402000u);
  EXPECT_EQ(classify_insn(t.code.back()).target, 0x401007u);
}

TEST(X86OptimizeTrampoline, RefusesRipRelativeDataOutOfReach) {
  auto plan = analyze(kRipLoad, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  std::array<uint8_t, kTrampolineSize> bytes{};
  auto n = write_trampoline(*plan, {kFunction + (3ull << 30), 1, 1}, bytes);
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error(),
            "the instruction at 0x401000 refers to 0x402000, beyond disp32 reach of the "
            "trampoline at 0xc0401000");
}

TEST(X86OptimizeTrampoline, RefusesASmallBufferOrABadPlan) {
  auto plan = analyze(kClassicEntry, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  std::array<uint8_t, kTrampolineSize - 1> small{};
  EXPECT_FALSE(write_trampoline(*plan, kNear, small));
  std::array<uint8_t, kTrampolineSize> bytes{};
  OptimizePlan bad = *plan;
  bad.displaced_length = 9;
  EXPECT_FALSE(write_trampoline(bad, kNear, bytes));
  bad = *plan;
  bad.displaced.erase(bad.displaced.begin() + 1);
  EXPECT_FALSE(write_trampoline(bad, kNear, bytes));
}

// Past 2 GiB from every target of the tests' functions: relocated branches go absolute.
constexpr TrampolineSpec kFar = {kFunction + (3ull << 30), 0x7f1234560000, 1};

Insn decode_at(const Trampoline& t, const TrampolineSpec& spec, size_t at) {
  auto insn = decode_insn(std::span(t.bytes).subspan(at), spec.address + at);
  EXPECT_TRUE(insn) << insn.error();
  return insn ? *insn : Insn{};
}

// The copies of the displaced instructions before the last: the original bytes.
void expect_copied(const Trampoline& t, const OptimizePlan& plan) {
  const size_t start = displaced_copy_offset();
  for (size_t i = 0; i + 1 < plan.displaced.size(); ++i) {
    const Insn& insn = plan.displaced[i];
    EXPECT_THAT(std::span(t.bytes).subspan(start + (insn.address - plan.address), insn.length),
                ElementsAreArray(std::span(insn.bytes).first(insn.length)));
  }
}

// A jump at offset `at` to `to`: e9 rel32, or ff 25 00 00 00 00 over the
// absolute address when `far`. Returns the offset past it.
size_t expect_jump(const Trampoline& t, const TrampolineSpec& spec, size_t at, uint64_t to,
                   bool far) {
  const Insn jump = decode_at(t, spec, at);
  const Classified c = classify_insn(jump);
  if (!far) {
    EXPECT_EQ(jump.bytes[0], 0xe9) << disassemble(jump);
    EXPECT_EQ(c.branch, Branch::kJmpRel);
    EXPECT_EQ(c.target, to) << disassemble(jump);
    return at + jump.length;
  }
  EXPECT_THAT(std::span(jump.bytes).first(jump.length),
              ElementsAreArray({0xff, 0x25, 0x00, 0x00, 0x00, 0x00}));
  EXPECT_EQ(c.branch, Branch::kJmpIndirect);
  EXPECT_EQ(c.rip_target, spec.address + at + 6);
  EXPECT_EQ(read_le64(t.bytes, at + 6), to);
  return at + 14;
}

// A jcc with condition `cc` at offset `at` to `to`: 0f 80+cc rel32, or when
// `far` the inverted jcc rel8 over the absolute jump. Returns the offset past it.
size_t expect_jcc(const Trampoline& t, const TrampolineSpec& spec, size_t at, uint8_t cc,
                  uint64_t to, bool far) {
  const Insn jcc = decode_at(t, spec, at);
  const Classified c = classify_insn(jcc);
  EXPECT_EQ(c.branch, Branch::kJcc) << disassemble(jcc);
  if (!far) {
    EXPECT_THAT(std::span(jcc.bytes).first(2), ElementsAreArray({0x0f, 0x80 | cc}));
    EXPECT_EQ(jcc.length, 6);
    EXPECT_EQ(c.cond, cc);
    EXPECT_EQ(c.target, to) << disassemble(jcc);
    return at + 6;
  }
  // j!cc over the 14 bytes of the absolute jump: the not-taken path goes on after it.
  EXPECT_EQ(jcc.length, 2);
  EXPECT_EQ(c.cond, cc ^ 1);
  EXPECT_EQ(c.target, spec.address + at + 16) << disassemble(jcc);
  return expect_jump(t, spec, at + 2, to, true);
}

// The call's push at `at`: lea -8(%rsp),%rsp; movl $lo,(%rsp); movl
// $hi,4(%rsp), storing `value`. Returns the offset past it.
size_t expect_push(const Trampoline& t, const TrampolineSpec& spec, size_t at, uint64_t value) {
  const Insn lea = decode_at(t, spec, at);
  EXPECT_THAT(std::span(lea.bytes).first(lea.length),
              ElementsAreArray({0x48, 0x8d, 0x64, 0x24, 0xf8}));  // lea rsp, [rsp-8]
  const Insn low = decode_at(t, spec, at + 5);
  EXPECT_EQ(low.length, 7);
  EXPECT_THAT(std::span(low.bytes).first(3), ElementsAreArray({0xc7, 0x04, 0x24}));  // [rsp]
  const Insn high = decode_at(t, spec, at + 12);
  EXPECT_EQ(high.length, 8);
  EXPECT_THAT(std::span(high.bytes).first(4),
              ElementsAreArray({0xc7, 0x44, 0x24, 0x04}));  // [rsp+4]
  uint32_t lo = 0;
  uint32_t hi = 0;
  std::memcpy(&lo, low.bytes.data() + 3, 4);
  std::memcpy(&hi, high.bytes.data() + 4, 4);
  EXPECT_EQ(uint64_t{lo} | (uint64_t{hi} << 32), value);
  return at + 20;
}

// The ip literal ends the trampoline at `at`.
void expect_literal_at(const Trampoline& t, size_t at) {
  EXPECT_EQ(t.size, at + 8);
  EXPECT_EQ(read_le64(t.bytes, at), kFunction);
}

TEST(X86OptimizeTrampoline, RelocatesAJccRel8) {
  auto plan = analyze(kJzRel8, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  for (bool far : {false, true}) {
    SCOPED_TRACE(far ? "far" : "near");
    const TrampolineSpec& spec = far ? kFar : kNear;
    Trampoline t = write(*plan, spec);
    expect_copied(t, *plan);
    const size_t start = displaced_copy_offset();
    size_t at = expect_jcc(t, spec, start + 4, 0x4, 0x401009, far);  // jz
    at = expect_jump(t, spec, at, 0x401006, far);                    // back: not taken
    expect_literal_at(t, at);
    // The relocated jz's copy starts where it did; inside it nothing maps back.
    EXPECT_EQ(trampoline_offset_of(*plan, 0x401004), start + 4);
    EXPECT_EQ(original_pc_of(*plan, start + 4), 0x401004u);
    EXPECT_FALSE(original_pc_of(*plan, start + 5));
    EXPECT_FALSE(original_pc_of(*plan, start + 6));  // the range's end: inside the longer copy
    EXPECT_FALSE(original_pc_of(*plan, start + 10));
  }
}

TEST(X86OptimizeTrampoline, RelocatesAJccRel32) {
  auto plan = analyze(kJzRel32, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  for (bool far : {false, true}) {
    SCOPED_TRACE(far ? "far" : "near");
    const TrampolineSpec& spec = far ? kFar : kNear;
    Trampoline t = write(*plan, spec);
    expect_copied(t, *plan);
    const size_t start = displaced_copy_offset();
    size_t at = expect_jcc(t, spec, start + 2, 0x4, 0x401010, far);
    at = expect_jump(t, spec, at, 0x401008, far);
    expect_literal_at(t, at);
    EXPECT_EQ(original_pc_of(*plan, start + 2), 0x401002u);
    EXPECT_FALSE(original_pc_of(*plan, start + 8));
  }
}

TEST(X86OptimizeTrampoline, RelocatesAJmpWithoutAJumpBack) {
  struct Case {
    const Bytes& code;
    size_t last;  // the jmp's offset in the copy
    uint64_t target;
  };
  for (const Case& c : {Case{kJmpRel8, 4, 0x401007}, Case{kJmpRel32, 2, 0x403000}}) {
    auto plan = analyze(c.code, kFunction);
    ASSERT_TRUE(plan) << plan.error();
    for (bool far : {false, true}) {
      SCOPED_TRACE(far ? "far" : "near");
      const TrampolineSpec& spec = far ? kFar : kNear;
      Trampoline t = write(*plan, spec);
      expect_copied(t, *plan);
      const size_t at = expect_jump(t, spec, displaced_copy_offset() + c.last, c.target, far);
      expect_literal_at(t, at);  // nothing after the jmp but the ip literal
    }
  }
}

TEST(X86OptimizeTrampoline, RelocatesACallWithTheOriginalReturnAddress) {
  auto plan = analyze(kCallRel32, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  for (bool far : {false, true}) {
    SCOPED_TRACE(far ? "far" : "near");
    const TrampolineSpec& spec = far ? kFar : kNear;
    Trampoline t = write(*plan, spec);
    expect_copied(t, *plan);
    const size_t start = displaced_copy_offset();
    // Pushes address + displaced_length, just past the replaced bytes.
    size_t at = expect_push(t, spec, start + 1, 0x401006);
    at = expect_jump(t, spec, at, 0x403000, far);
    expect_literal_at(t, at);
    for (const Insn& insn : t.code) EXPECT_FALSE(touches_extended_state(insn)) << disassemble(insn);
    EXPECT_EQ(original_pc_of(*plan, start + 1), 0x401001u);  // before the lea: nothing done
    EXPECT_FALSE(original_pc_of(*plan, start + 6));          // after it: no original pc
    EXPECT_FALSE(original_pc_of(*plan, start + 13));
  }
}

TEST(X86OptimizeTrampoline, TheWorstCaseFits) {
  // 0x401000: 55 53 56 57          push rbp; push rbx; push rsi; push rdi
  // 0x401004: e8 f7 1f 00 00       call 0x403000     <- out of reach: the longest copy
  auto plan = analyze({0x55, 0x53, 0x56, 0x57, 0xe8, 0xf7, 0x1f, 0x00, 0x00}, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  Trampoline t = write(*plan, kFar);
  EXPECT_EQ(t.size, displaced_copy_offset() + 4 + 20 + 14 + 8);
  EXPECT_LE(t.size, kTrampolineSize);
  // 4 bytes, then a 15-byte instruction (movabs padded with cs prefixes), the far jump back.
  // 0x401000: 55 53 56 57          push rbp; push rbx; push rsi; push rdi
  // 0x401004: 2e 2e 2e 2e 2e 48 b8 11 22 33 44 55 66 77 88   cs movabs rax, 0x8877665544332211
  // 0x401013: c3                   ret
  auto longest = analyze({0x55, 0x53, 0x56, 0x57, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x48,
                          0xb8, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xc3},
                         kFunction);
  ASSERT_TRUE(longest) << longest.error();
  ASSERT_EQ(longest->displaced_length, 19);
  EXPECT_EQ(write(*longest, kFar).size, displaced_copy_offset() + 19 + 14 + 8);
}

TEST(X86OptimizeTrampoline, RefusesABranchAPlanDidNotEndWith) {
  // A plan made by hand with the jz first: the writer refuses it too.
  auto plan = analyze(kJzRel8, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  OptimizePlan bad = *plan;
  std::swap(bad.displaced[0].bytes, bad.displaced[2].bytes);  // 74 03 at 0x401000, 85 ff last
  std::array<uint8_t, kTrampolineSize> bytes{};
  auto n = write_trampoline(bad, kNear, bytes);
  ASSERT_FALSE(n);
  EXPECT_THAT(n.error(),
              HasSubstr("the branch at 0x401000 is not a direct jcc, jmp, call or a ret"));
}

}  // namespace
}  // namespace dprobe::arch::x86_64
