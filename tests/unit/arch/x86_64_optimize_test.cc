// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
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

#if defined(__x86_64__) && defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace dprobe::arch::x86_64 {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kFunction = 0x401000;

Result<OptimizePlan, std::string> analyze(const Bytes& code, uint64_t probe,
                                          std::vector<uint64_t> pads = {}) {
  return can_optimize(code, kFunction, probe, pads);
}

std::string refusal(const Bytes& code, uint64_t probe, std::vector<uint64_t> pads = {}) {
  auto plan = analyze(code, probe, std::move(pads));
  EXPECT_FALSE(plan) << "optimized, displaced_length " << int{plan ? plan->displaced_length : 0};
  return plan ? std::string() : plan.error();
}

// 0x401000: 55                   push rbp
// 0x401001: 48 89 e5             mov rbp, rsp
// 0x401004: 48 83 ec 10          sub rsp, 0x10
// 0x401008: 31 c0                xor eax, eax
// 0x40100a: c9                   leave
// 0x40100b: c3                   ret
const Bytes kClassicEntry = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83,
                             0xec, 0x10, 0x31, 0xc0, 0xc9, 0xc3};

TEST(X86Optimize, ClassicEntryDisplacesThreeInstructions) {
  auto plan = analyze(kClassicEntry, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->address, kFunction);
  EXPECT_EQ(plan->displaced_length, 8);  // 1 + 3 + 4
  ASSERT_EQ(plan->displaced.size(), 3u);
  EXPECT_EQ(plan->displaced[0].address, 0x401000u);
  EXPECT_EQ(plan->displaced[1].address, 0x401001u);
  EXPECT_EQ(plan->displaced[2].address, 0x401004u);
}

TEST(X86Optimize, Endbr64AtEntryIsDisplacedLikeAnyInstruction) {
  // 0x401000: f3 0f 1e fa          endbr64
  // 0x401004: 55                   push rbp
  // 0x401005: 48 89 e5             mov rbp, rsp
  // 0x401008: 5d                   pop rbp
  // 0x401009: c3                   ret
  auto plan = analyze({0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3}, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->displaced_length, 5);  // 4 + 1
  EXPECT_EQ(plan->displaced.size(), 2u);
}

TEST(X86Optimize, RefusesAnEndbr64PastTheFirstDisplacedInstruction) {
  // 0x401000: 55                   push rbp
  // 0x401001: f3 0f 1e fa          endbr64      <- an indirect branch lands here
  // 0x401005: 5d                   pop rbp
  // 0x401006: c3                   ret
  EXPECT_THAT(refusal({0x55, 0xf3, 0x0f, 0x1e, 0xfa, 0x5d, 0xc3}, kFunction), HasSubstr("endbr64"));
}

TEST(X86Optimize, InnerProbeOnARipRelativeLoad) {
  // 0x401000: 48 8b 05 f9 0f 00 00 mov rax, [rip+0xff9] = [0x402000]
  // 0x401007: c3                   ret
  auto plan = analyze({0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00, 0xc3}, kFunction);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->displaced_length, 7);
}

TEST(X86Optimize, RefusesAJccIntoTheSecondDisplacedInstruction) {
  // 0x401000: 55                   push rbp
  // 0x401001: 48 89 e5             mov rbp, rsp   <- je lands here
  // 0x401004: 48 83 ec 10          sub rsp, 0x10
  // 0x401008: 85 ff                test edi, edi
  // 0x40100a: 74 f5                je 0x401001
  // 0x40100c: c9                   leave
  // 0x40100d: c3                   ret
  const Bytes code = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec,
                      0x10, 0x85, 0xff, 0x74, 0xf5, 0xc9, 0xc3};
  EXPECT_EQ(refusal(code, kFunction), "jz at 0x40100a targets 0x401001, inside the replaced bytes");
  // From the second instruction on, 0x401001 is the range's start: allowed.
  auto plan = analyze(code, 0x401001);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->displaced_length, 7);
}

TEST(X86Optimize, RefusesAJumpTable) {
  // 0x401000: 55                   push rbp
  // 0x401001: 48 89 e5             mov rbp, rsp
  // 0x401004: 48 83 ec 10          sub rsp, 0x10
  // 0x401008: ff e0                jmp rax
  EXPECT_EQ(refusal({0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xff, 0xe0}, kFunction),
            "indirect jump (jump table?) at 0x401008");
  // 0x401008: ff 24 c5 00 20 40 00 jmp qword ptr [rax*8+0x402000]
  EXPECT_THAT(refusal({0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xff, 0x24, 0xc5, 0x00, 0x20,
                       0x40, 0x00},
                      kFunction),
              HasSubstr("indirect jump (jump table?)"));
}

TEST(X86Optimize, AGotTailCallIsNotAJumpTable) {
  // 0x401000: 55                   push rbp
  // 0x401001: 48 89 e5             mov rbp, rsp
  // 0x401004: 48 83 ec 10          sub rsp, 0x10
  // 0x401008: c9                   leave
  // 0x401009: ff 25 f1 0f 00 00    jmp qword ptr [rip+0xff1] = [0x403000]
  auto plan = analyze(
      {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xc9, 0xff, 0x25, 0xf1, 0x0f, 0x00, 0x00},
      kFunction);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->displaced_length, 8);
}

TEST(X86Optimize, RefusesTakingAnAddressInsideTheRange) {
  // 0x401000: 55                   push rbp
  // 0x401001: 48 89 e5             mov rbp, rsp
  // 0x401004: 48 83 ec 10          sub rsp, 0x10
  // 0x401008: 48 8d 0d f2 ff ff ff lea rcx, [rip-0xe] = [0x401001]
  // 0x40100f: ff d1                call rcx
  // 0x401011: c9                   leave
  // 0x401012: c3                   ret
  EXPECT_EQ(refusal({0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0x48, 0x8d, 0x0d, 0xf2, 0xff,
                     0xff, 0xff, 0xff, 0xd1, 0xc9, 0xc3},
                    kFunction),
            "lea at 0x401008 takes the address 0x401001, inside the replaced bytes");
}

TEST(X86Optimize, RefusesALandingPadInsideTheRange) {
  EXPECT_EQ(refusal(kClassicEntry, kFunction, {0x401004}),
            "exception landing pad at 0x401004 inside the replaced bytes");
  // At either end of the range is not inside it.
  EXPECT_TRUE(analyze(kClassicEntry, kFunction, {0x401000, 0x401008}));
}

TEST(X86Optimize, RefusesAShortFunction) {
  // 0x401000: 31 c0                xor eax, eax
  // 0x401002: c3                   ret
  EXPECT_EQ(refusal({0x31, 0xc0, 0xc3}, kFunction),
            "only 3 bytes of instructions before the function's end, the jump needs 5");
}

// 0x401000: 85 ff                test edi, edi
// 0x401002: 89 f8                mov eax, edi
// 0x401004: 74 03                jz 0x401009        <- the last displaced instruction
// 0x401006: 83 c0 01             add eax, 1
// 0x401009: c3                   ret
const Bytes kJzRel8 = {0x85, 0xff, 0x89, 0xf8, 0x74, 0x03, 0x83, 0xc0, 0x01, 0xc3};

// 0x401000: 85 ff                test edi, edi
// 0x401002: 0f 84 08 00 00 00    jz 0x401010        <- the last displaced instruction
// 0x401008: 89 f8                mov eax, edi
// 0x40100a: 83 c0 01             add eax, 1
// 0x40100d: c3                   ret
// 0x40100e: 66 90                nop
// 0x401010: 31 c0                xor eax, eax
// 0x401012: c3                   ret
const Bytes kJzRel32 = {0x85, 0xff, 0x0f, 0x84, 0x08, 0x00, 0x00, 0x00, 0x89, 0xf8,
                        0x83, 0xc0, 0x01, 0xc3, 0x66, 0x90, 0x31, 0xc0, 0xc3};

// 0x401000: 89 f8                mov eax, edi
// 0x401002: 01 f0                add eax, esi
// 0x401004: eb 01                jmp 0x401007       <- the last displaced instruction
// 0x401006: 90                   nop
// 0x401007: c3                   ret
const Bytes kJmpRel8 = {0x89, 0xf8, 0x01, 0xf0, 0xeb, 0x01, 0x90, 0xc3};

// 0x401000: 31 c0                xor eax, eax
// 0x401002: e9 f9 1f 00 00       jmp 0x403000       <- a tail call, the last displaced
const Bytes kJmpRel32 = {0x31, 0xc0, 0xe9, 0xf9, 0x1f, 0x00, 0x00};

// 0x401000: 55                   push rbp
// 0x401001: e8 fa 1f 00 00       call 0x403000      <- the last displaced instruction
// 0x401006: 5d                   pop rbp
// 0x401007: c3                   ret
const Bytes kCallRel32 = {0x55, 0xe8, 0xfa, 0x1f, 0x00, 0x00, 0x5d, 0xc3};

TEST(X86Optimize, DisplacesADirectBranchAsTheLastInstruction) {
  struct Case {
    const char* name;
    const Bytes& code;
    uint8_t length;
    size_t count;
  };
  for (const Case& c : {Case{"jz rel8", kJzRel8, 6, 3}, Case{"jz rel32", kJzRel32, 8, 2},
                        Case{"jmp rel8", kJmpRel8, 6, 3}, Case{"jmp rel32", kJmpRel32, 7, 2},
                        Case{"call rel32", kCallRel32, 6, 2}}) {
    auto plan = analyze(c.code, kFunction);
    ASSERT_TRUE(plan) << c.name << ": " << plan.error();
    EXPECT_EQ(plan->displaced_length, c.length) << c.name;
    EXPECT_EQ(plan->displaced.size(), c.count) << c.name;
  }
  // A jz rel32 alone is 6 bytes: first and last at once.
  auto plan = analyze(kJzRel32, 0x401002);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->displaced.size(), 1u);
}

TEST(X86Optimize, RefusesABranchThatIsNotTheLastDisplacedInstruction) {
  // 0x401000: 74 03                jz 0x401005        <- more bytes must follow it
  // 0x401002: 48 89 f8             mov rax, rdi
  // 0x401005: c3                   ret
  EXPECT_EQ(refusal({0x74, 0x03, 0x48, 0x89, 0xf8, 0xc3}, kFunction),
            "cannot displace jz at 0x401000: a branch can run from the trampoline only as the "
            "last displaced instruction");
  // A 5-byte branch at the probe is first and last at once.
  // 0x401000: e8 fb 0f 00 00       call 0x402000
  // 0x401005: c3                   ret
  EXPECT_TRUE(analyze({0xe8, 0xfb, 0x0f, 0x00, 0x00, 0xc3}, kFunction));
}

TEST(X86Optimize, RefusesRetIndirectBranchesLoopAndJrcxz) {
  // 0x401000: 48 89 f8             mov rax, rdi
  // 0x401003: 5d                   pop rbp
  // 0x401004: c3                   ret
  EXPECT_EQ(refusal({0x48, 0x89, 0xf8, 0x5d, 0xc3}, kFunction),
            "cannot displace ret at 0x401004: a ret cannot run from the trampoline");
  // 0x401000: 48 89 f8             mov rax, rdi
  // 0x401003: e3 00                jrcxz 0x401005
  // 0x401005: c3                   ret
  EXPECT_EQ(refusal({0x48, 0x89, 0xf8, 0xe3, 0x00, 0xc3}, kFunction),
            "cannot displace jrcxz at 0x401003: a loop or jrcxz cannot run from the trampoline");
  // 0x401003: e2 00                loop 0x401005
  EXPECT_EQ(refusal({0x48, 0x89, 0xf8, 0xe2, 0x00, 0xc3}, kFunction),
            "cannot displace loop at 0x401003: a loop or jrcxz cannot run from the trampoline");
  // 0x401003: ff d0                call rax
  EXPECT_EQ(refusal({0x48, 0x89, 0xf8, 0xff, 0xd0, 0xc3}, kFunction),
            "cannot displace call at 0x401003: an indirect branch cannot run from the trampoline");
  // 0x401003: ff e0                jmp rax
  EXPECT_EQ(refusal({0x48, 0x89, 0xf8, 0xff, 0xe0}, kFunction),
            "cannot displace jmp at 0x401003: an indirect branch cannot run from the trampoline");
  // 0x401000: 31 c0                xor eax, eax
  // 0x401002: ff 25 f8 0f 00 00    jmp qword ptr [rip+0xff8]: a GOT tail call, still indirect
  EXPECT_THAT(refusal({0x31, 0xc0, 0xff, 0x25, 0xf8, 0x0f, 0x00, 0x00}, kFunction),
              HasSubstr("an indirect branch cannot run from the trampoline"));
}

TEST(X86Optimize, ALastBranchKeepsTheOtherRules) {
  // 0x401000: 85 ff                test edi, edi
  // 0x401002: 89 f8                mov eax, edi
  // 0x401004: 74 fc                jz 0x401002        <- inside the replaced bytes
  // 0x401006: c3                   ret
  EXPECT_EQ(refusal({0x85, 0xff, 0x89, 0xf8, 0x74, 0xfc, 0xc3}, kFunction),
            "jz at 0x401004 targets 0x401002, inside the replaced bytes");
  // A jz back to the probe itself re-enters the site: allowed.
  // 0x401004: 74 fa                jz 0x401000
  EXPECT_TRUE(analyze({0x85, 0xff, 0x89, 0xf8, 0x74, 0xfa, 0xc3}, kFunction));
  // A branch hint (3e) is dropped when re-encoded; an address-size prefix is refused.
  // 0x401004: 3e 74 01             jz 0x401008 (ds: the "taken" hint)
  EXPECT_TRUE(analyze({0x85, 0xff, 0x89, 0xf8, 0x3e, 0x74, 0x01, 0xc3, 0xc3}, kFunction));
  // 0x401004: 67 74 01             jz 0x401008 (addr32)
  EXPECT_THAT(refusal({0x85, 0xff, 0x89, 0xf8, 0x67, 0x74, 0x01, 0xc3, 0xc3}, kFunction),
              HasSubstr("a prefix the trampoline cannot re-encode"));
}

TEST(X86Optimize, RefusesASyscallInRange) {
  // 0x401000: 31 c0                xor eax, eax
  // 0x401002: 0f 05                syscall
  // 0x401004: 90                   nop
  // 0x401005: c3                   ret
  EXPECT_THAT(refusal({0x31, 0xc0, 0x0f, 0x05, 0x90, 0xc3}, kFunction),
              HasSubstr("cannot displace syscall at 0x401002"));
}

TEST(X86Optimize, RefusesARangeCrossingTheFunctionsEnd) {
  // 0x401000: 55                   push rbp
  // 0x401001: 48 89 e5             mov rbp, rsp
  // 0x401004: 48 8b 07             mov rax, [rdi]
  // 0x401007: 48 89 06             mov [rsi], rax   (the symbol ends here: noreturn call after)
  const Bytes code = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x8b, 0x07, 0x48, 0x89, 0x06};
  EXPECT_TRUE(analyze(code, 0x401004));
  EXPECT_EQ(refusal(code, 0x401007),
            "only 3 bytes of instructions before the function's end, the jump needs 5");
}

TEST(X86Optimize, RefusesAProbeOffABoundaryOrOutsideTheFunction) {
  EXPECT_EQ(refusal(kClassicEntry, 0x401002), "probe 0x401002 is not on an instruction boundary");
  EXPECT_EQ(refusal(kClassicEntry, 0x40100c), "probe 0x40100c is outside the function");
  EXPECT_EQ(refusal(kClassicEntry, 0x400fff), "probe 0x400fff is outside the function");
}

TEST(X86Optimize, RefusesAFunctionThatDoesNotDecodeToItsEnd) {
  // 0x401000: 55 48 89 e5 48 83 ec 10   push rbp; mov rbp, rsp; sub rsp, 0x10
  // 0x401008: 06                        (bad: push es is invalid in 64-bit mode)
  EXPECT_EQ(refusal({0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0x06}, kFunction),
            "the function does not decode to its end (at 0x401008)");
  // An instruction cut by the function's end.
  EXPECT_THAT(refusal({0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec}, kFunction),
              HasSubstr("does not decode to its end (at 0x401004)"));
}

TEST(X86Optimize, SiteJumpIsAJmpRel32) {
  // 0x401000: e9 fb 0f 00 00       jmp 0x402000
  EXPECT_THAT(site_jump(0x401000, 0x402000), ElementsAreArray({0xe9, 0xfb, 0x0f, 0x00, 0x00}));
  // 0x401000: e9 fb ff ef ff       jmp 0x301000
  EXPECT_THAT(site_jump(0x401000, 0x301000), ElementsAreArray({0xe9, 0xfb, 0xff, 0xef, 0xff}));
}

TEST(X86Optimize, ExtendedStateInstructionsAreRecognised) {
  auto touches = [](const Bytes& bytes) {
    auto insn = decode_insn(bytes, 0x1000);
    EXPECT_TRUE(insn) << insn.error();
    return insn && touches_extended_state(*insn);
  };
  EXPECT_TRUE(touches({0x0f, 0x28, 0xc1}));        // movaps xmm0, xmm1
  EXPECT_TRUE(touches({0x66, 0x0f, 0xef, 0xc0}));  // pxor xmm0, xmm0
  EXPECT_TRUE(touches({0xc5, 0xf8, 0x77}));        // vzeroupper
  EXPECT_TRUE(touches({0xd9, 0xc0}));              // fld st0
  EXPECT_TRUE(touches({0x0f, 0x77}));              // emms
  EXPECT_TRUE(touches({0x0f, 0xae, 0x00}));        // fxsave [rax]
  EXPECT_TRUE(touches({0x0f, 0xae, 0x10}));        // ldmxcsr [rax]
  EXPECT_TRUE(touches({0x0f, 0xae, 0x20}));        // xsave [rax]
  EXPECT_FALSE(touches({0x48, 0x89, 0xd8}));       // mov rax, rbx
  EXPECT_FALSE(touches({0x9c}));                   // pushfq
  EXPECT_FALSE(touches({0xfc}));                   // cld
}

// The trampoline's code, decoded where it runs, up to and including the jump
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
  EXPECT_THAT(n.error(), HasSubstr("the branch at 0x401000 is not a direct jcc, jmp or call"));
}

#if defined(__x86_64__) && defined(__linux__)
// Run for real: a tiny function in an executable page, its trampoline in the
// same page, the site jump written over it, then a call through a pointer.

// offset 0x00: 55                   push rbp
//        0x01: 48 89 e5             mov rbp, rsp
//        0x04: 48 89 7c 24 f8       mov [rsp-8], rdi       ; the red zone
//        0x09: 48 8b 05 f0 00 00 00 mov rax, [rip+0xf0]    ; the constant at 0x100
//        0x10: 48 03 44 24 f8       add rax, [rsp-8]       ; the red zone survived
//        0x15: 48 01 f0             add rax, rsi
//        0x18: 48 89 2a             mov [rdx], rbp
//        0x1b: 5d                   pop rbp
//        0x1c: c3                   ret
const Bytes kAddConstant = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0x7c, 0x24, 0xf8, 0x48,
                            0x8b, 0x05, 0xf0, 0x00, 0x00, 0x00, 0x48, 0x03, 0x44, 0x24,
                            0xf8, 0x48, 0x01, 0xf0, 0x48, 0x89, 0x2a, 0x5d, 0xc3};
constexpr size_t kConstantOffset = 0x100;
constexpr size_t kTrampolineOffset = 0x200;
constexpr uint64_t kConstant = 0x1000000;
constexpr uint64_t kCookie = 0xfeedface;

using AddConstant = uint64_t (*)(uint64_t a, uint64_t b, uint64_t* rbp_out, uint64_t c, uint64_t d,
                                 uint64_t e);

struct Hit {
  int count = 0;
  SavedRegs regs{};
  uint64_t cookie = 0;
  uint64_t frame_alignment = 1;
};
Hit g_hit;

void record_hit(SavedRegs* regs, uint64_t cookie) {
  ++g_hit.count;
  g_hit.regs = *regs;
  g_hit.cookie = cookie;
  // rbp after this function's push rbp: 16-aligned when the call was.
  g_hit.frame_alignment = reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) % 16;
}

class ExecutablePage {
 public:
  ExecutablePage()
      : page_(mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) {}
  ~ExecutablePage() {
    if (page_ != MAP_FAILED) munmap(page_, kSize);
  }
  ExecutablePage(const ExecutablePage&) = delete;
  ExecutablePage& operator=(const ExecutablePage&) = delete;

  bool ok() const { return page_ != MAP_FAILED; }
  uint8_t* bytes() const { return static_cast<uint8_t*>(page_); }
  uint64_t address() const { return reinterpret_cast<uint64_t>(page_); }
  bool make_executable() { return mprotect(page_, kSize, PROT_READ | PROT_EXEC) == 0; }

 private:
  static constexpr size_t kSize = 4096;
  void* page_;
};

// Probes `function` (already at the page's start, helpers and data after it)
// at `probe_offset`: its trampoline at kTrampolineOffset calling record_hit,
// the site jump over it; then the page is made executable.
// The trampoline of `function` (at `at`, writable) probed at `probe_offset`,
// written at `trampoline`, and the site jump to it.
void probe_function(const Bytes& function, uint8_t* at, size_t probe_offset, uint8_t* trampoline,
                    bool sahf = true) {
  const auto function_address = reinterpret_cast<uint64_t>(at);
  const uint64_t probe = function_address + probe_offset;
  auto plan = can_optimize(function, function_address, probe, {});
  ASSERT_TRUE(plan) << plan.error();
  const TrampolineSpec spec = {reinterpret_cast<uint64_t>(trampoline),
                               reinterpret_cast<uint64_t>(&record_hit), kCookie, sahf};
  auto n = write_trampoline(*plan, spec, {trampoline, kTrampolineSize});
  ASSERT_TRUE(n) << n.error();
  const auto jump = site_jump(probe, spec.address);
  std::memcpy(at + probe_offset, jump.data(), jump.size());
}

void install(ExecutablePage& page, const Bytes& function, size_t probe_offset, bool sahf = true) {
  probe_function(function, page.bytes(), probe_offset, page.bytes() + kTrampolineOffset, sahf);
  if (::testing::Test::HasFatalFailure()) return;
  ASSERT_TRUE(page.make_executable());
  g_hit = Hit{};
}

// Probes kAddConstant at `probe_offset`, calls it, returns what the handler saw.
void run_probed(size_t probe_offset) {
  ExecutablePage page;
  ASSERT_TRUE(page.ok());
  std::memcpy(page.bytes(), kAddConstant.data(), kAddConstant.size());
  std::memcpy(page.bytes() + kConstantOffset, &kConstant, sizeof(kConstant));
  install(page, kAddConstant, probe_offset);
  if (::testing::Test::HasFatalFailure()) return;
  const uint64_t probe = page.address() + probe_offset;

  uint64_t rbp = 0;
  auto add = reinterpret_cast<AddConstant>(page.bytes());
  const uint64_t result = add(1000, 22, &rbp, 0xc, 0xd, 0xe);

  EXPECT_EQ(result, kConstant + 1000 + 22);
  ASSERT_EQ(g_hit.count, 1);
  const auto& slot = g_hit.regs.slot;
  EXPECT_EQ(slot[kDi], 1000u);
  EXPECT_EQ(slot[kSi], 22u);
  EXPECT_EQ(slot[kDx], reinterpret_cast<uint64_t>(&rbp));
  EXPECT_EQ(slot[kCx], 0xcu);
  EXPECT_EQ(slot[kR8], 0xdu);
  EXPECT_EQ(slot[kR9], 0xeu);
  EXPECT_EQ(slot[kIp], probe);
  // At 0x09 rsp == rbp; at the entry rsp is 8 above the rbp pushed below it.
  EXPECT_EQ(slot[kSp], probe_offset == 0 ? rbp + 8 : rbp);
  if (probe_offset != 0) EXPECT_EQ(slot[kBp], rbp);
  EXPECT_EQ(slot[kFlags] & 0x2, 0x2u) << "rflags bit 1 is always set";
  // cs..orig_ax are the hit's to fill (arch::fill_fixed_slots): the
  // trampoline leaves whatever the stack held there.
  EXPECT_EQ(g_hit.cookie, kCookie);
  EXPECT_EQ(g_hit.frame_alignment, 0u);
}

// rflags in, rflags as the instruction after the probe has them, out.
// offset 0x00: 57              push rdi
//        0x01: 9d              popfq
//        0x02: b9 00 00 00 00  mov ecx, 0     ; the probe: displaced alone
//        0x07: 9c              pushfq
//        0x08: 58              pop rax
//        0x09: fc              cld            ; the caller's ABI
//        0x0a: c3              ret
const Bytes kFlagsThrough = {0x57, 0x9d, 0xb9, 0x00, 0x00, 0x00, 0x00, 0x9c, 0x58, 0xfc, 0xc3};
using FlagsThrough = uint64_t (*)(uint64_t flags);

// Every combination of CF PF AF ZF SF OF and DF reaches the displaced
// instruction and what follows as it was at the probe, and the handler
// saw it in the frame (running with DF clear).
void run_flags(bool sahf) {
  constexpr uint64_t kBits[] = {0x1, 0x4, 0x10, 0x40, 0x80, 0x800, 0x400};
  constexpr uint64_t kChecked = 0x1 | 0x4 | 0x10 | 0x40 | 0x80 | 0x800 | 0x400;
  ExecutablePage page;
  ASSERT_TRUE(page.ok());
  std::memcpy(page.bytes(), kFlagsThrough.data(), kFlagsThrough.size());
  install(page, kFlagsThrough, 0x02, sahf);
  if (::testing::Test::HasFatalFailure()) return;
  auto through = reinterpret_cast<FlagsThrough>(page.bytes());
  for (uint32_t combination = 0; combination < 128; ++combination) {
    uint64_t flags = 0x202;  // IF and the bit that is always set
    for (size_t bit = 0; bit < std::size(kBits); ++bit) {
      if ((combination >> bit) & 1) flags |= kBits[bit];
    }
    EXPECT_EQ(through(flags) & kChecked, flags & kChecked) << "rflags " << std::hex << flags;
    EXPECT_EQ(g_hit.regs.slot[kFlags] & kChecked, flags & kChecked) << std::hex << flags;
  }
  EXPECT_EQ(g_hit.count, 128);
}

TEST(X86OptimizeRun, EveryStatusFlagAndDirectionFlagComeBackBySahf) { run_flags(true); }

TEST(X86OptimizeRun, EveryStatusFlagAndDirectionFlagComeBackByPopfq) { run_flags(false); }

TEST(X86OptimizeRun, ProbeOnARipRelativeLoadBetweenRedZoneWriteAndRead) { run_probed(0x09); }

TEST(X86OptimizeRun, ProbeAtTheEntryDisplacesPushAndRedZoneStore) { run_probed(0x00); }

// f(a, b) = a == 0 ? b + 100 : a + b, the test before the jz.
// offset 0x00: 85 ff              test edi, edi
//        0x02: 89 f0              mov eax, esi
//        0x04: 0f 84 03 00 00 00  jz 0x0d
//        0x0a: 01 f8              add eax, edi
//        0x0c: c3                 ret
//        0x0d: 83 c0 64           add eax, 100
//        0x10: c3                 ret
const Bytes kJzRel32Function = {0x85, 0xff, 0x89, 0xf0, 0x0f, 0x84, 0x03, 0x00, 0x00,
                                0x00, 0x01, 0xf8, 0xc3, 0x83, 0xc0, 0x64, 0xc3};
// The same with a jz rel8.
// offset 0x00: 85 ff              test edi, edi
//        0x02: 89 f0              mov eax, esi
//        0x04: 74 03              jz 0x09
//        0x06: 01 f8              add eax, edi
//        0x08: c3                 ret
//        0x09: 83 c0 64           add eax, 100
//        0x0c: c3                 ret
const Bytes kJzRel8Function = {0x85, 0xff, 0x89, 0xf0, 0x74, 0x03, 0x01,
                               0xf8, 0xc3, 0x83, 0xc0, 0x64, 0xc3};

using TwoArgs = uint32_t (*)(uint32_t a, uint32_t b);

void run_jz(const Bytes& function, size_t probe_offset) {
  ExecutablePage page;
  ASSERT_TRUE(page.ok());
  std::memcpy(page.bytes(), function.data(), function.size());
  install(page, function, probe_offset);
  if (::testing::Test::HasFatalFailure()) return;
  auto f = reinterpret_cast<TwoArgs>(page.bytes());
  EXPECT_EQ(f(0, 5), 105u);  // taken
  EXPECT_EQ(f(7, 5), 12u);   // not taken: on after the replaced bytes
  EXPECT_EQ(f(0, 9), 109u);
  EXPECT_EQ(g_hit.count, 3);
  EXPECT_EQ(g_hit.regs.slot[kIp], page.address() + probe_offset);
}

TEST(X86OptimizeRun, EntryDisplacesAJzRel32) { run_jz(kJzRel32Function, 0x00); }

// From 0x02 the flags the jz reads were set before the probe: they survive the handler.
TEST(X86OptimizeRun, ProbeBetweenTheTestAndTheJz) { run_jz(kJzRel32Function, 0x02); }

TEST(X86OptimizeRun, EntryDisplacesAJzRel8) { run_jz(kJzRel8Function, 0x00); }

// f(a, b, seen) = a + b + 1; the callee stores its [rsp] and rsp in seen[0], seen[1].
// offset 0x00: 55                 push rbp
//        0x01: e8 3a 00 00 00     call 0x40
//        0x06: 5d                 pop rbp
//        0x07: 48 83 c0 01        add rax, 1
//        0x0b: c3                 ret
const Bytes kCallFunction = {0x55, 0xe8, 0x3a, 0x00, 0x00, 0x00,
                             0x5d, 0x48, 0x83, 0xc0, 0x01, 0xc3};
// offset 0x40: 48 8b 0c 24        mov rcx, [rsp]      ; the return address
//        0x44: 48 89 0a           mov [rdx], rcx
//        0x47: 48 89 62 08        mov [rdx+8], rsp
//        0x4b: 48 8d 04 37        lea rax, [rdi+rsi]
//        0x4f: c3                 ret
const Bytes kCallee = {0x48, 0x8b, 0x0c, 0x24, 0x48, 0x89, 0x0a, 0x48,
                       0x89, 0x62, 0x08, 0x48, 0x8d, 0x04, 0x37, 0xc3};
constexpr size_t kCalleeOffset = 0x40;

using CallThrough = uint64_t (*)(uint64_t a, uint64_t b, uint64_t* seen);

TEST(X86OptimizeRun, EntryDisplacesACallAndTheCalleeSeesTheOriginalReturnAddress) {
  ExecutablePage page;
  ASSERT_TRUE(page.ok());
  std::memcpy(page.bytes(), kCallFunction.data(), kCallFunction.size());
  std::memcpy(page.bytes() + kCalleeOffset, kCallee.data(), kCallee.size());
  install(page, kCallFunction, 0x00);
  if (HasFatalFailure()) return;
  auto f = reinterpret_cast<CallThrough>(page.bytes());
  uint64_t seen[2] = {};
  EXPECT_EQ(f(1000, 22, seen), 1023u);  // the callee returned into the original code
  ASSERT_EQ(g_hit.count, 1);
  // The return address of the original call: just past it, in the function.
  EXPECT_EQ(seen[0], page.address() + 6);
  // One 8-byte push by the call below push rbp: the stack as the original left it.
  EXPECT_EQ(seen[1], g_hit.regs.slot[kSp] - 16);
}
// Three pages in one reservation of ours: the branch targets at its start,
// the functions 1.5 GiB up (their rel32 reaches the targets), the trampolines
// 2.75 GiB up (1.25 GiB from the functions, 2.75 GiB from the targets): the
// relocated jz and call must take the absolute forms, and run.
class FarPages {
 public:
  static constexpr uint64_t kReserved = 3ull << 30;
  static constexpr uint64_t kFunctions = 3ull << 29;
  static constexpr uint64_t kTrampolines = 11ull << 28;

  FarPages()
      : base_(mmap(nullptr, kReserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                   0)) {}
  ~FarPages() {
    if (base_ != MAP_FAILED) munmap(base_, kReserved);
  }
  FarPages(const FarPages&) = delete;
  FarPages& operator=(const FarPages&) = delete;

  bool ok() const { return base_ != MAP_FAILED; }
  uint8_t* at(uint64_t offset) const { return static_cast<uint8_t*>(base_) + offset; }
  bool protect(int prot) {
    for (uint64_t offset : {uint64_t{0}, kFunctions, kTrampolines}) {
      if (mprotect(at(offset), 4096, prot) != 0) return false;
    }
    return true;
  }

 private:
  void* base_;
};

void put_le32(uint8_t* at, int64_t value) {
  const auto bits = static_cast<uint32_t>(value);
  std::memcpy(at, &bits, sizeof(bits));
}

TEST(X86OptimizeRun, BranchTargetsBeyondTheTrampolinesReach) {
  FarPages pages;
  ASSERT_TRUE(pages.ok());
  ASSERT_TRUE(pages.protect(PROT_READ | PROT_WRITE));
  uint8_t* targets = pages.at(0);
  uint8_t* functions = pages.at(FarPages::kFunctions);
  uint8_t* trampolines = pages.at(FarPages::kTrampolines);
  // kJzRel32Function, its jz retargeted to targets + 0: add eax, 100; ret.
  Bytes jz = kJzRel32Function;
  jz.resize(0x0d);
  put_le32(jz.data() + 6, targets - (functions + 0x0a));
  const Bytes add100 = {0x83, 0xc0, 0x64, 0xc3};
  std::memcpy(targets, add100.data(), add100.size());
  std::memcpy(functions, jz.data(), jz.size());
  // kCallFunction at functions + 0x40, its call retargeted to kCallee at targets + 0x40.
  Bytes call = kCallFunction;
  put_le32(call.data() + 2, (targets + 0x40) - (functions + 0x46));
  std::memcpy(targets + 0x40, kCallee.data(), kCallee.size());
  std::memcpy(functions + 0x40, call.data(), call.size());
  probe_function(jz, functions, 0x00, trampolines);
  probe_function(call, functions + 0x40, 0x00, trampolines + kTrampolineSize);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(pages.protect(PROT_READ | PROT_EXEC));
  g_hit = Hit{};
  // The absolute forms: jnz over jmp *0(%rip) after test/mov; jmp *0(%rip) after push and the
  // call's 20-byte push.
  const size_t start = displaced_copy_offset();
  EXPECT_THAT(std::span(trampolines + start + 4, 4), ElementsAreArray({0x75, 0x0e, 0xff, 0x25}));
  EXPECT_THAT(std::span(trampolines + kTrampolineSize + start + 1 + 20, 2),
              ElementsAreArray({0xff, 0x25}));

  auto f = reinterpret_cast<TwoArgs>(functions);
  EXPECT_EQ(f(0, 5), 105u);  // taken: through the absolute jump
  EXPECT_EQ(f(7, 5), 12u);
  auto g = reinterpret_cast<CallThrough>(functions + 0x40);
  uint64_t seen[2] = {};
  EXPECT_EQ(g(1000, 22, seen), 1023u);
  EXPECT_EQ(seen[0], reinterpret_cast<uint64_t>(functions + 0x46));
  EXPECT_EQ(seen[1], g_hit.regs.slot[kSp] - 16);
  EXPECT_EQ(g_hit.count, 3);
}
#endif  // __x86_64__ && __linux__

}  // namespace
}  // namespace dprobe::arch::x86_64
