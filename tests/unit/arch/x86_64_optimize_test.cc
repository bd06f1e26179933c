// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Where the x86_64 jump optimizer may put a jump: the instructions it
// displaces, and every reason it refuses (branches into the range, jump
// tables, landing pads, a function too short, system calls).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/x86_64/classify.h"
#include "arch/x86_64/optimize.h"
#include "unit/arch/x86_64_optimize_cases.h"

namespace dprobe::arch::x86_64 {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string refusal(const Bytes& code, uint64_t probe, std::vector<uint64_t> pads = {}) {
  auto plan = analyze(code, probe, std::move(pads));
  EXPECT_FALSE(plan) << "optimized, displaced_length " << int{plan ? plan->displaced_length : 0};
  return plan ? std::string() : plan.error();
}

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
            "indirect jump at 0x401008 (a jump table of no pattern dprobe reads)");
  // 0x401008: ff 24 c5 00 20 40 00 jmp qword ptr [rax*8+0x402000], no bound check
  EXPECT_EQ(refusal({0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xff, 0x24, 0xc5, 0x00, 0x20,
                     0x40, 0x00},
                    kFunction),
            "indirect jump at 0x401008 (a jump table whose bound check is not found)");
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

TEST(X86Optimize, DisplacesARetThatEndsTheDisplacedInstructions) {
  // 0x401000: 48 89 f8             mov rax, rdi
  // 0x401003: 5d                   pop rbp
  // 0x401004: c3                   ret
  EXPECT_TRUE(analyze({0x48, 0x89, 0xf8, 0x5d, 0xc3}, kFunction));
  // The commonest small function: 0x401000: 48 8d 04 37  lea rax, [rdi+rsi]; c3 ret
  EXPECT_TRUE(analyze({0x48, 0x8d, 0x04, 0x37, 0xc3}, kFunction));
  // ret imm16, and rep ret (an old AMD idiom)
  EXPECT_TRUE(analyze({0x48, 0x89, 0xf8, 0xc2, 0x08, 0x00}, kFunction));
  EXPECT_TRUE(analyze({0x31, 0xc0, 0x5d, 0xf3, 0xc3}, kFunction));
  // 0x401000: 31 c0                xor eax, eax
  // 0x401002: c3                   ret          <- more bytes must follow it
  // 0x401003: 48 89 f8             mov rax, rdi
  EXPECT_EQ(refusal({0x31, 0xc0, 0xc3, 0x48, 0x89, 0xf8, 0xc3}, kFunction),
            "cannot displace ret at 0x401002: a ret can run from the trampoline only as the "
            "last displaced instruction");
}

TEST(X86Optimize, RefusesIndirectBranchesLoopAndJrcxz) {
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
}  // namespace
}  // namespace dprobe::arch::x86_64
