// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/x86_64/classify.h"
#include "arch/x86_64/regs.h"

namespace dprobe::arch::x86_64 {
namespace {

using ::testing::StartsWith;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kAt = 0x401000;

// Bytes that decode_insn refuses are classified from a hand-made Insn, as
// a caller holding raw bytes would do.
Insn insn_of(const Bytes& bytes, uint64_t address = kAt) {
  auto decoded = decode_insn(bytes, address);
  if (decoded) return *decoded;
  Insn raw;
  raw.address = address;
  raw.length = static_cast<uint8_t>(bytes.size());
  std::copy(bytes.begin(), bytes.end(), raw.bytes.begin());
  return raw;
}

Classified classified(const Bytes& bytes, uint64_t address = kAt) {
  return classify_insn(insn_of(bytes, address));
}

// Names each parameterized case after its `name`, so ctest lists it readably.
struct CaseName {
  template <typename Case>
  std::string operator()(const ::testing::TestParamInfo<Case>& param) const {
    return param.param.name;
  }
};

struct RejectCase {
  const char* name;
  Bytes bytes;
  const char* reason;  // how the reason starts
};

class X86Rejects : public ::testing::TestWithParam<RejectCase> {};

TEST_P(X86Rejects, WithAReason) {
  Classified c = classified(GetParam().bytes);
  EXPECT_EQ(c.cls, InsnClass::kReject);
  EXPECT_FALSE(can_probe(c));
  EXPECT_THAT(c.reason, StartsWith(GetParam().reason));
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Cases, X86Rejects, ::testing::Values(
    // cc                      int3
    RejectCase{"int3", {0xcc}, "int3: another breakpoint is already there"},
    // cd 80                   int 0x80
    RejectCase{"int_n", {0xcd, 0x80}, "int n: a software interrupt"},
    // cd 03                   int 0x3 (the two-byte form)
    RejectCase{"int_3_long", {0xcd, 0x03}, "int n:"},
    // ce                      into: invalid in 64-bit mode
    RejectCase{"into", {0xce}, "invalid or undefined encoding"},
    // f1                      int1 (icebp)
    RejectCase{"int1", {0xf1}, "int1 (icebp): a debug trap"},
    // f4                      hlt
    RejectCase{"hlt", {0xf4}, "hlt: privileged"},
    // e4 10                   in al, 0x10
    RejectCase{"in_imm", {0xe4, 0x10}, "in: port I/O"},
    // ec                      in al, dx
    RejectCase{"in_dx", {0xec}, "in: port I/O"},
    // e7 10                   out 0x10, eax
    RejectCase{"out_imm", {0xe7, 0x10}, "out: port I/O"},
    // 6c                      insb
    RejectCase{"insb", {0x6c}, "ins: port I/O"},
    // f3 6d                   rep insd
    RejectCase{"rep_insd", {0xf3, 0x6d}, "ins: port I/O"},
    // 6e                      outsb
    RejectCase{"outsb", {0x6e}, "outs: port I/O"},
    // fa                      cli
    RejectCase{"cli", {0xfa}, "cli: changing the interrupt flag"},
    // fb                      sti
    RejectCase{"sti", {0xfb}, "sti: changing the interrupt flag"},
    // 0f 22 d8                mov cr3, rax
    RejectCase{"mov_to_cr", {0x0f, 0x22, 0xd8}, "mov to/from a control or debug register"},
    // 0f 20 c0                mov rax, cr0
    RejectCase{"mov_from_cr", {0x0f, 0x20, 0xc0}, "mov to/from a control or debug register"},
    // 0f 23 c0                mov dr0, rax
    RejectCase{"mov_to_dr", {0x0f, 0x23, 0xc0}, "mov to/from a control or debug register"},
    // 0f 21 f8                mov rax, dr7
    RejectCase{"mov_from_dr", {0x0f, 0x21, 0xf8}, "mov to/from a control or debug register"},
    // 0f 01 10                lgdt [rax]
    RejectCase{"lgdt", {0x0f, 0x01, 0x10}, "lgdt: privileged system instruction"},
    // 0f 01 18                lidt [rax]
    RejectCase{"lidt", {0x0f, 0x01, 0x18}, "lidt: privileged system instruction"},
    // 0f 00 d0                lldt ax
    RejectCase{"lldt", {0x0f, 0x00, 0xd0}, "lldt: privileged system instruction"},
    // 0f 00 d8                ltr ax
    RejectCase{"ltr", {0x0f, 0x00, 0xd8}, "ltr: privileged system instruction"},
    // 0f 08                   invd
    RejectCase{"invd", {0x0f, 0x08}, "invd: privileged system instruction"},
    // 0f 09                   wbinvd
    RejectCase{"wbinvd", {0x0f, 0x09}, "wbinvd: privileged system instruction"},
    // 0f 30                   wrmsr
    RejectCase{"wrmsr", {0x0f, 0x30}, "wrmsr: privileged system instruction"},
    // 0f 32                   rdmsr
    RejectCase{"rdmsr", {0x0f, 0x32}, "rdmsr: privileged system instruction"},
    // 0f 01 f8                swapgs
    RejectCase{"swapgs", {0x0f, 0x01, 0xf8}, "swapgs: privileged system instruction"},
    // 0f 07                   sysret
    RejectCase{"sysret", {0x0f, 0x07}, "sysret: privileged system instruction"},
    // 0f 35                   sysexit
    RejectCase{"sysexit", {0x0f, 0x35}, "sysexit: privileged system instruction"},
    // cf                      iretd
    RejectCase{"iretd", {0xcf}, "iretd: an interrupt return"},
    // 48 cf                   iretq
    RejectCase{"iretq", {0x48, 0xcf}, "iretq: an interrupt return"},
    // 0f 06                   clts (privileged, found by Zydis's attribute)
    RejectCase{"clts", {0x0f, 0x06}, "privileged system instruction"},
    // c7 f8 00 00 00 00       xbegin 0x401006
    RejectCase{"xbegin", {0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00}, "xbegin: a transaction cannot"},
    // 0f 01 d5                xend
    RejectCase{"xend", {0x0f, 0x01, 0xd5}, "xend: a transaction cannot"},
    // c6 f8 01                xabort 0x1
    RejectCase{"xabort", {0xc6, 0xf8, 0x01}, "xabort: a transaction cannot"},
    // 0f 0b                   ud2
    RejectCase{"ud2", {0x0f, 0x0b}, "ud2: undefined instruction"},
    // 0f b9 c0                ud1 eax, eax
    RejectCase{"ud1", {0x0f, 0xb9, 0xc0}, "ud1: undefined instruction"},
    // 0f ff c0                ud0 eax, eax
    RejectCase{"ud0", {0x0f, 0xff, 0xc0}, "ud0: undefined instruction"},
    // 06                      (bad): push es is invalid in 64-bit mode
    RejectCase{"invalid", {0x06}, "invalid or undefined encoding"},
    // 48 8b                   (bad): cut short
    RejectCase{"truncated", {0x48, 0x8b}, "invalid or undefined encoding"},
    // ff 1c 24                call far [rsp]
    RejectCase{"lcall", {0xff, 0x1c, 0x24}, "far jmp/call/ret"},
    // ff 2c 24                jmp far [rsp]
    RejectCase{"ljmp", {0xff, 0x2c, 0x24}, "far jmp/call/ret"},
    // 48 ff 2c 24             rex.w jmp far [rsp]
    RejectCase{"ljmp_rex_w", {0x48, 0xff, 0x2c, 0x24}, "far jmp/call/ret"},
    // cb                      ret far
    RejectCase{"lret", {0xcb}, "far jmp/call/ret"},
    // ca 08 00                ret far 0x8
    RejectCase{"lret_imm", {0xca, 0x08, 0x00}, "far jmp/call/ret"},
    // 64 ff 24 25 10 00 00 00 jmp fs:[0x10]
    RejectCase{"jmp_fs", {0x64, 0xff, 0x24, 0x25, 0x10, 0x00, 0x00, 0x00},
               "branch with an fs/gs segment override"},
    // 65 ff 15 10 00 00 00    call gs:[rip+0x10]
    RejectCase{"call_gs", {0x65, 0xff, 0x15, 0x10, 0x00, 0x00, 0x00},
               "branch with an fs/gs segment override"},
    // 64 ff d0                fs call rax
    RejectCase{"call_reg_fs", {0x64, 0xff, 0xd0}, "branch with an fs/gs segment override"},
    // 64 eb 00                fs jmp 0x401003
    RejectCase{"jmp_rel_fs", {0x64, 0xeb, 0x00}, "branch with an fs/gs segment override"},
    // 65 c3                   gs ret
    RejectCase{"ret_gs", {0x65, 0xc3}, "branch with an fs/gs segment override"},
    // 66 e8 00 00 00 00       data16 call 0x401006
    RejectCase{"call_rel_66", {0x66, 0xe8, 0x00, 0x00, 0x00, 0x00}, "branch with an 0x66"},
    // 66 c3                   data16 ret
    RejectCase{"ret_66", {0x66, 0xc3}, "branch with an 0x66"},
    // 66 ff d0                data16 call rax
    RejectCase{"call_reg_66", {0x66, 0xff, 0xd0}, "branch with an 0x66"},
    // 66 ff e0                data16 jmp rax
    RejectCase{"jmp_reg_66", {0x66, 0xff, 0xe0}, "branch with an 0x66"},
    // 66 0f 84 00 00 00 00    data16 jz 0x401007
    RejectCase{"jcc_66", {0x66, 0x0f, 0x84, 0x00, 0x00, 0x00, 0x00}, "branch with an 0x66"},
    // 67 ff 10                call [eax]
    RejectCase{"call_mem_67", {0x67, 0xff, 0x10}, "indirect branch with an 0x67"}),
    CaseName());
// clang-format on

struct OutOfLineCase {
  const char* name;
  Bytes bytes;
  bool rip_relative;
  uint8_t disp_offset;
  uint64_t rip_target;
};

class X86OutOfLine : public ::testing::TestWithParam<OutOfLineCase> {};

TEST_P(X86OutOfLine, NotesRipRelativeOperands) {
  const OutOfLineCase& p = GetParam();
  Classified c = classified(p.bytes);
  EXPECT_EQ(c.cls, InsnClass::kOutOfLine) << c.reason;
  EXPECT_TRUE(can_probe(c));
  EXPECT_STREQ(c.reason, "");
  EXPECT_EQ(c.branch, Branch::kNone);
  EXPECT_EQ(c.rip_relative, p.rip_relative);
  if (p.rip_relative) {
    EXPECT_EQ(c.disp_offset, p.disp_offset);
    EXPECT_EQ(c.rip_target, p.rip_target);
  }
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Cases, X86OutOfLine, ::testing::Values(
    // 48 89 e5                      mov rbp, rsp
    OutOfLineCase{"mov_reg", {0x48, 0x89, 0xe5}, false, 0, 0},
    // 55                            push rbp
    OutOfLineCase{"push", {0x55}, false, 0, 0},
    // 41 5f                         pop r15
    OutOfLineCase{"pop_r15", {0x41, 0x5f}, false, 0, 0},
    // 0f 05                         syscall
    OutOfLineCase{"syscall", {0x0f, 0x05}, false, 0, 0},
    // f3 0f 1e fa                   endbr64
    OutOfLineCase{"endbr64", {0xf3, 0x0f, 0x1e, 0xfa}, false, 0, 0},
    // f0 48 0f b1 0f                lock cmpxchg [rdi], rcx
    OutOfLineCase{"lock_cmpxchg", {0xf0, 0x48, 0x0f, 0xb1, 0x0f}, false, 0, 0},
    // f3 a4                         rep movsb
    OutOfLineCase{"rep_movsb", {0xf3, 0xa4}, false, 0, 0},
    // c8 10 00 00                   enter 0x10, 0x0
    OutOfLineCase{"enter", {0xc8, 0x10, 0x00, 0x00}, false, 0, 0},
    // 0f a2                         cpuid
    OutOfLineCase{"cpuid", {0x0f, 0xa2}, false, 0, 0},
    // 64 48 8b 04 25 28 00 00 00    mov rax, fs:[0x28] (no branch: fs is fine)
    OutOfLineCase{"mov_fs", {0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00}, false, 0, 0},
    // 48 8b 05 f9 0f 00 00          mov rax, [rip+0xff9] = [0x402000]
    OutOfLineCase{"mov_rip", {0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00}, true, 3, 0x402000},
    // 48 8d 3d 00 f0 ff ff          lea rdi, [rip-0x1000] = [0x400007]
    OutOfLineCase{"lea_rip", {0x48, 0x8d, 0x3d, 0x00, 0xf0, 0xff, 0xff}, true, 3, 0x400007},
    // 48 83 3d f8 0f 00 00 05       cmp qword ptr [rip+0xff8], 0x5 = [0x402000]
    OutOfLineCase{"cmp_rip_imm", {0x48, 0x83, 0x3d, 0xf8, 0x0f, 0x00, 0x00, 0x05}, true, 3,
                  0x402000},
    // ff 35 fa 0f 00 00             push qword ptr [rip+0xffa] = [0x402000]
    OutOfLineCase{"push_rip", {0xff, 0x35, 0xfa, 0x0f, 0x00, 0x00}, true, 2, 0x402000},
    // c5 fd 6f 05 f8 0f 00 00       vmovdqa ymm0, [rip+0xff8] = [0x402000]
    OutOfLineCase{"vmovdqa_rip", {0xc5, 0xfd, 0x6f, 0x05, 0xf8, 0x0f, 0x00, 0x00}, true, 4,
                  0x402000},
    // 62 f1 fe 48 6f 05 f6 0f 00 00 vmovdqu64 zmm0, [rip+0xff6] = [0x402000]
    OutOfLineCase{"vmovdqu64_evex_rip", {0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x05, 0xf6, 0x0f, 0x00, 0x00},
                  true, 6, 0x402000},
    // f0 48 0f b1 0d f7 0f 00 00    lock cmpxchg [rip+0xff7], rcx = [0x402000]
    OutOfLineCase{"lock_cmpxchg_rip", {0xf0, 0x48, 0x0f, 0xb1, 0x0d, 0xf7, 0x0f, 0x00, 0x00}, true,
                  5, 0x402000}),
    CaseName());
// clang-format on

struct EmulateCase {
  const char* name;
  Bytes bytes;
  Branch branch;
  uint64_t target;  // relative branches
};

class X86Emulated : public ::testing::TestWithParam<EmulateCase> {};

TEST_P(X86Emulated, RelativeTargetsAreAbsolute) {
  const EmulateCase& p = GetParam();
  Classified c = classified(p.bytes);
  EXPECT_EQ(c.cls, InsnClass::kEmulate) << c.reason;
  EXPECT_TRUE(can_probe(c));
  EXPECT_EQ(c.branch, p.branch);
  EXPECT_EQ(c.target, p.target);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Cases, X86Emulated, ::testing::Values(
    // e8 fb 0f 00 00          call 0x402000
    EmulateCase{"call_rel32", {0xe8, 0xfb, 0x0f, 0x00, 0x00}, Branch::kCallRel, 0x402000},
    // e8 00 00 00 00          call 0x401005 (the next instruction)
    EmulateCase{"call_next", {0xe8, 0x00, 0x00, 0x00, 0x00}, Branch::kCallRel, 0x401005},
    // e9 fb ef ff ff          jmp 0x400000
    EmulateCase{"jmp_rel32", {0xe9, 0xfb, 0xef, 0xff, 0xff}, Branch::kJmpRel, 0x400000},
    // eb fe                   jmp 0x401000 (itself)
    EmulateCase{"jmp_rel8", {0xeb, 0xfe}, Branch::kJmpRel, 0x401000},
    // f2 e9 fa 0f 00 00       bnd jmp 0x402000
    EmulateCase{"bnd_jmp", {0xf2, 0xe9, 0xfa, 0x0f, 0x00, 0x00}, Branch::kJmpRel, 0x402000},
    // 74 10                   jz 0x401012
    EmulateCase{"jz_rel8", {0x74, 0x10}, Branch::kJcc, 0x401012},
    // 2e 74 10                cs jz 0x401013 (branch hint)
    EmulateCase{"jz_hint", {0x2e, 0x74, 0x10}, Branch::kJcc, 0x401013},
    // 0f 8f fa 0f 00 00       jnle 0x402000
    EmulateCase{"jg_rel32", {0x0f, 0x8f, 0xfa, 0x0f, 0x00, 0x00}, Branch::kJcc, 0x402000},
    // e2 fe                   loop 0x401000
    EmulateCase{"loop", {0xe2, 0xfe}, Branch::kLoop, 0x401000},
    // 67 e2 fd                loop 0x401000 (ecx)
    EmulateCase{"loop_ecx", {0x67, 0xe2, 0xfd}, Branch::kLoop, 0x401000},
    // e1 10                   loope 0x401012
    EmulateCase{"loope", {0xe1, 0x10}, Branch::kLoope, 0x401012},
    // e0 10                   loopne 0x401012
    EmulateCase{"loopne", {0xe0, 0x10}, Branch::kLoopne, 0x401012},
    // e3 10                   jrcxz 0x401012
    EmulateCase{"jrcxz", {0xe3, 0x10}, Branch::kJrcxz, 0x401012},
    // 67 e3 10                jecxz 0x401013
    EmulateCase{"jecxz", {0x67, 0xe3, 0x10}, Branch::kJrcxz, 0x401013},
    // c3                      ret
    EmulateCase{"ret", {0xc3}, Branch::kRet, 0},
    // f2 c3                   bnd ret
    EmulateCase{"bnd_ret", {0xf2, 0xc3}, Branch::kRet, 0},
    // c2 10 00                ret 0x10
    EmulateCase{"ret_imm", {0xc2, 0x10, 0x00}, Branch::kRet, 0},
    // ff d0                   call rax
    EmulateCase{"call_reg", {0xff, 0xd0}, Branch::kCallIndirect, 0},
    // 3e ff e0                notrack jmp rax
    EmulateCase{"notrack_jmp_reg", {0x3e, 0xff, 0xe0}, Branch::kJmpIndirect, 0},
    // ff 15 fa 0f 00 00       call [rip+0xffa] = [0x402000]
    EmulateCase{"call_rip", {0xff, 0x15, 0xfa, 0x0f, 0x00, 0x00}, Branch::kCallIndirect, 0},
    // 3e ff 24 c5 00 20 40 00 notrack jmp [rax*8+0x402000]
    EmulateCase{"notrack_jmp_table", {0x3e, 0xff, 0x24, 0xc5, 0x00, 0x20, 0x40, 0x00},
                Branch::kJmpIndirect, 0}),
    CaseName());
// clang-format on

TEST(X86Classify, JccConditionIsTheOpcodesLowNibble) {
  for (uint8_t cc = 0; cc < 16; ++cc) {
    // 70+cc 00                jcc 0x401002 (rel8)
    Classified short_form = classified({static_cast<uint8_t>(0x70 + cc), 0x00});
    EXPECT_EQ(short_form.branch, Branch::kJcc);
    EXPECT_EQ(short_form.cond, cc);
    EXPECT_EQ(short_form.target, 0x401002u);
    // 0f 80+cc 00 01 00 00    jcc 0x401106 (rel32)
    Classified near_form =
        classified({0x0f, static_cast<uint8_t>(0x80 + cc), 0x00, 0x01, 0x00, 0x00});
    EXPECT_EQ(near_form.branch, Branch::kJcc);
    EXPECT_EQ(near_form.cond, cc);
    EXPECT_EQ(near_form.target, 0x401106u);
  }
}

TEST(X86Classify, RetImmediateIsPopBytes) {
  // c2 10 00                ret 0x10
  EXPECT_EQ(classified({0xc2, 0x10, 0x00}).pop_bytes, 0x10);
  // c3                      ret
  EXPECT_EQ(classified({0xc3}).pop_bytes, 0);
}

TEST(X86Classify, IndirectThroughRegistersUsesRegsSlots) {
  // ff d0                   call rax
  Classified call_rax = classified({0xff, 0xd0});
  EXPECT_TRUE(call_rax.indirect_register);
  EXPECT_EQ(call_rax.indirect_reg, kAx);
  // 41 ff d3                call r11
  EXPECT_EQ(classified({0x41, 0xff, 0xd3}).indirect_reg, kR11);
  // ff e4                   jmp rsp
  Classified jmp_rsp = classified({0xff, 0xe4});
  EXPECT_EQ(jmp_rsp.branch, Branch::kJmpIndirect);
  EXPECT_EQ(jmp_rsp.indirect_reg, kSp);
  // ff d3                   call rbx
  EXPECT_EQ(classified({0xff, 0xd3}).indirect_reg, kBx);
}

TEST(X86Classify, IndirectThroughMemoryKeepsTheAddressing) {
  // 42 ff 54 c8 10          call [rax+r9*8+0x10]
  Classified c = classified({0x42, 0xff, 0x54, 0xc8, 0x10});
  EXPECT_EQ(c.branch, Branch::kCallIndirect);
  EXPECT_FALSE(c.indirect_register);
  EXPECT_EQ(c.indirect_mem.base, kAx);
  EXPECT_EQ(c.indirect_mem.index, kR9);
  EXPECT_EQ(c.indirect_mem.scale, 8);
  EXPECT_EQ(c.indirect_mem.disp, 0x10);
  EXPECT_FALSE(c.indirect_mem.rip_relative);

  // ff 64 24 f8             jmp [rsp-0x8]
  Classified j = classified({0xff, 0x64, 0x24, 0xf8});
  EXPECT_EQ(j.branch, Branch::kJmpIndirect);
  EXPECT_EQ(j.indirect_mem.base, kSp);
  EXPECT_EQ(j.indirect_mem.index, -1);
  EXPECT_EQ(j.indirect_mem.scale, 1);
  EXPECT_EQ(j.indirect_mem.disp, -8);

  // ff 24 c5 00 20 40 00    jmp [rax*8+0x402000]
  Classified table = classified({0xff, 0x24, 0xc5, 0x00, 0x20, 0x40, 0x00});
  EXPECT_EQ(table.indirect_mem.base, -1);
  EXPECT_EQ(table.indirect_mem.index, kAx);
  EXPECT_EQ(table.indirect_mem.scale, 8);
  EXPECT_EQ(table.indirect_mem.disp, 0x402000);
}

TEST(X86Classify, IndirectThroughRipRelativeMemory) {
  // ff 25 fa 0f 00 00       jmp [rip+0xffa] = [0x402000]
  Classified c = classified({0xff, 0x25, 0xfa, 0x0f, 0x00, 0x00});
  EXPECT_EQ(c.branch, Branch::kJmpIndirect);
  EXPECT_TRUE(c.indirect_mem.rip_relative);
  EXPECT_EQ(c.indirect_mem.base, -1);
  EXPECT_EQ(c.indirect_mem.index, -1);
  EXPECT_EQ(c.indirect_mem.disp, 0xffa);
  EXPECT_TRUE(c.rip_relative);
  EXPECT_EQ(c.rip_target, 0x402000u);
  EXPECT_EQ(c.disp_offset, 2);
}

}  // namespace
}  // namespace dprobe::arch::x86_64
