// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "arch/x86_64/decoder.h"

namespace dprobe::arch::x86_64 {
namespace {

using Bytes = std::vector<uint8_t>;

Insn decoded(const Bytes& bytes, uint64_t address) {
  auto insn = decode_insn(bytes, address);
  EXPECT_TRUE(insn) << insn.error();
  return insn ? *insn : Insn{};
}

TEST(X86DecodeInsn, TakesOneInstructionFromTheFront) {
  // 48 89 e5    mov rbp, rsp
  // c3          ret
  Insn insn = decoded({0x48, 0x89, 0xe5, 0xc3}, 0x401136);
  EXPECT_EQ(insn.address, 0x401136u);
  EXPECT_EQ(insn.length, 3);
  EXPECT_EQ(insn.bytes[0], 0x48);
  EXPECT_EQ(insn.bytes[2], 0xe5);
  EXPECT_EQ(insn.bytes[3], 0) << "bytes past the instruction are zero";
}

TEST(X86DecodeInsn, LongestInstruction) {
  // 66 66 66 66 66 2e 66 0f 1f 84 00 00 00 00 00    data16 ... cs nop word [rax+rax*1]
  const Bytes nop15 = {0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x66, 0x0f,
                       0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00};
  Insn insn = decoded(nop15, 0x1000);
  EXPECT_EQ(insn.length, 15);
  EXPECT_EQ(insn.bytes[14], 0x00);
}

TEST(X86DecodeInsn, ErrorsSayWhy) {
  auto empty = decode_insn({}, 0x1000);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error(), "no bytes to decode at 0x1000");

  // 48 8b       mov r64, r/m64 without its ModRM
  auto cut = decode_insn(Bytes{0x48, 0x8b}, 0x1000);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error(),
            "cannot decode the instruction at 0x1000: the bytes end inside the instruction");

  // 06          push es: invalid in 64-bit mode
  auto invalid = decode_insn(Bytes{0x06}, 0x2000);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error(),
            "cannot decode the instruction at 0x2000: invalid or undefined encoding");

  // 15 operand-size prefixes and a nop: 16 bytes
  Bytes too_long(15, 0x66);
  too_long.push_back(0x90);
  auto long_one = decode_insn(too_long, 0x3000);
  ASSERT_FALSE(long_one);
  EXPECT_EQ(long_one.error(), "cannot decode the instruction at 0x3000: longer than 15 bytes");
}

TEST(X86Disassemble, IntelSyntaxWithBytesInAColumn) {
  // 48 89 e5    mov rbp, rsp
  EXPECT_EQ(disassemble(decoded({0x48, 0x89, 0xe5}, 0x401136)),
            "0x401136: 48 89 e5             mov rbp, rsp");
  // 55          push rbp
  EXPECT_EQ(disassemble(decoded({0x55}, 0x401135)), "0x401135: 55                   push rbp");
  // 48 c7 45 f8 2a 00 00 00    mov qword ptr [rbp-0x8], 0x2a  (8 bytes: past the column)
  EXPECT_EQ(disassemble(decoded({0x48, 0xc7, 0x45, 0xf8, 0x2a, 0x00, 0x00, 0x00}, 0x401000)),
            "0x401000: 48 c7 45 f8 2a 00 00 00 mov qword ptr [rbp-0x8], 0x2a");
}

TEST(X86Disassemble, BranchAndRipRelativeTargetsAreAbsolute) {
  // e8 fb 0f 00 00          call 0x402000
  EXPECT_EQ(disassemble(decoded({0xe8, 0xfb, 0x0f, 0x00, 0x00}, 0x401000)),
            "0x401000: e8 fb 0f 00 00       call 0x402000");
  // 75 fe                   jnz 0x401000 (itself)
  EXPECT_EQ(disassemble(decoded({0x75, 0xfe}, 0x401000)),
            "0x401000: 75 fe                jnz 0x401000");
  // 48 8b 05 f9 0f 00 00    mov rax, [rip+0xff9] = [0x402000]
  EXPECT_EQ(disassemble(decoded({0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00}, 0x401000)),
            "0x401000: 48 8b 05 f9 0f 00 00 mov rax, [0x402000]");
}

TEST(X86Disassemble, UndecodableBytesAreBad) {
  Insn bad;
  bad.address = 0x1000;
  bad.length = 1;
  bad.bytes[0] = 0x06;  // push es: invalid in 64-bit mode
  EXPECT_EQ(disassemble(bad), "0x1000: 06                   (bad)");
}

#if defined(__x86_64__)
// A small function of this binary, for the boundary check on real code.
// UBSan's function check would put data after a jmp at its entry, which a
// linear decode cannot cross.
__attribute__((noinline, no_sanitize("undefined"))) int boundary_fixture(int count, int step) {
  int sum = 0;
  for (int i = 0; i < count; ++i) sum += i * step;
  return sum > 1000 ? sum / 3 : sum;
}

// The fixture's bytes up to and including its first ret.
std::vector<Insn> fixture_instructions(std::span<const uint8_t>& code, uint64_t& address) {
  address = reinterpret_cast<uintptr_t>(&boundary_fixture);
  const auto* start = reinterpret_cast<const uint8_t*>(address);
  code = {start, 4096};  // more than the function; we stop at its ret
  std::vector<Insn> insns;
  size_t offset = 0;
  for (int n = 0; n < 200; ++n) {
    auto insn = decode_insn(code.subspan(offset), address + offset);
    if (!insn) {
      ADD_FAILURE() << insn.error();
      return insns;
    }
    insns.push_back(*insn);
    offset += insn->length;
    // c3 ret, f3 c3 rep ret, f2 c3 bnd ret
    if (insn->length <= 2 && insn->bytes[insn->length - 1] == 0xc3) {
      code = code.first(offset);
      return insns;
    }
  }
  ADD_FAILURE() << "no ret in the fixture's first 200 instructions";
  return insns;
}

TEST(X86CheckBoundary, EveryInstructionOfARealFunction) {
  EXPECT_EQ(boundary_fixture(3, 2), 6);
  std::span<const uint8_t> code;
  uint64_t start = 0;
  std::vector<Insn> insns = fixture_instructions(code, start);
  ASSERT_GE(insns.size(), 2u);
  for (const Insn& insn : insns) {
    SCOPED_TRACE(disassemble(insn));
    EXPECT_TRUE(check_boundary(code, start, insn.address));
    for (uint64_t inside = insn.address + 1; inside < insn.address + insn.length; ++inside) {
      auto result = check_boundary(code, start, inside);
      ASSERT_FALSE(result) << std::hex << inside;
      EXPECT_FALSE(result.error().undecodable);
      EXPECT_NE(result.error().listing().find("> " + disassemble(insn)), std::string::npos)
          << result.error().listing();
    }
  }
}
#else
TEST(X86CheckBoundary, EveryInstructionOfARealFunction) {
  GTEST_SKIP() << "reads this binary's own x86_64 code";
}
#endif

TEST(X86CheckBoundary, FunctionStartIsAlwaysFine) {
  EXPECT_TRUE(check_boundary({}, 0x401000, 0x401000));
  // 06          (bad)
  EXPECT_TRUE(check_boundary(Bytes{0x06, 0x06}, 0x401000, 0x401000));
}

// 0x401000: 55                   push rbp
// 0x401001: 48 89 e5             mov rbp, rsp
// 0x401004: 48 83 ec 10          sub rsp, 0x10
// 0x401008: 89 7d fc             mov [rbp-0x4], edi
// 0x40100b: 8b 45 fc             mov eax, [rbp-0x4]
// 0x40100e: 83 c0 01             add eax, 0x1
// 0x401011: c9                   leave
// 0x401012: c3                   ret
const Bytes kSmallFunction = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0x89, 0x7d,
                              0xfc, 0x8b, 0x45, 0xfc, 0x83, 0xc0, 0x01, 0xc9, 0xc3};

TEST(X86CheckBoundary, InsideAnInstructionListsWhereItFalls) {
  auto result = check_boundary(kSmallFunction, 0x401000, 0x40100c);
  ASSERT_FALSE(result);
  const BoundaryError& error = result.error();
  EXPECT_EQ(error.probe_address, 0x40100cu);
  ASSERT_EQ(error.around.size(), 6u);
  EXPECT_EQ(error.around[3].address, 0x40100bu);
  EXPECT_EQ(error.listing(),
            "  0x401001: 48 89 e5             mov rbp, rsp\n"
            "  0x401004: 48 83 ec 10          sub rsp, 0x10\n"
            "  0x401008: 89 7d fc             mov [rbp-0x4], edi\n"
            "> 0x40100b: 8b 45 fc             mov eax, [rbp-0x4]  <- probe at +0x1\n"
            "  0x40100e: 83 c0 01             add eax, 0x1\n"
            "  0x401011: c9                   leave");
}

TEST(X86CheckBoundary, NearTheEdgesTheContextShrinks) {
  // Inside the second instruction: one before; near the end: one after.
  auto early = check_boundary(kSmallFunction, 0x401000, 0x401002);
  ASSERT_FALSE(early);
  ASSERT_EQ(early.error().around.size(), 4u);
  EXPECT_EQ(early.error().around[0].address, 0x401000u);
  auto late = check_boundary(kSmallFunction, 0x401000, 0x40100f);
  ASSERT_FALSE(late);
  ASSERT_EQ(late.error().around.size(), 6u);
  EXPECT_EQ(late.error().around[3].address, 0x40100eu);
  EXPECT_EQ(late.error().around[5].address, 0x401012u);
}

TEST(X86CheckBoundary, InstructionStartsPass) {
  const uint64_t starts[] = {0x401001, 0x401004, 0x401008, 0x40100b, 0x40100e, 0x401011, 0x401012};
  for (uint64_t address : starts) {
    EXPECT_TRUE(check_boundary(kSmallFunction, 0x401000, address)) << std::hex << address;
  }
}

TEST(X86CheckBoundary, UndecodableBytesBeforeTheProbe) {
  // 0x401000: 55                   push rbp
  // 0x401001: 48 89 e5             mov rbp, rsp
  // 0x401004: 06                   (bad)
  // 0x401005: 90                   nop
  const Bytes code = {0x55, 0x48, 0x89, 0xe5, 0x06, 0x90, 0x90};
  auto result = check_boundary(code, 0x401000, 0x401005);
  ASSERT_FALSE(result);
  EXPECT_TRUE(result.error().undecodable);
  EXPECT_EQ(result.error().listing(),
            "  0x401000: 55                   push rbp\n"
            "  0x401001: 48 89 e5             mov rbp, rsp\n"
            "> 0x401004: 06 90 90             (bad)  <- cannot decode here, before the probe at "
            "0x401005");
}

TEST(X86CheckBoundary, CodeEndingInsideAnInstruction) {
  // 55 48 89    push rbp; then mov rbp, rsp cut short
  auto result = check_boundary(Bytes{0x55, 0x48, 0x89}, 0x401000, 0x401002);
  ASSERT_FALSE(result);
  EXPECT_TRUE(result.error().undecodable);
  ASSERT_EQ(result.error().around.size(), 2u);
  EXPECT_EQ(result.error().around[1].address, 0x401001u);
}

TEST(X86CheckBoundary, ProbeOutsideTheCode) {
  const uint64_t outside[] = {0x400fff, 0x401013, 0x500000};
  for (uint64_t address : outside) {
    auto result = check_boundary(kSmallFunction, 0x401000, address);
    ASSERT_FALSE(result) << std::hex << address;
    EXPECT_TRUE(result.error().around.empty());
  }
  EXPECT_EQ(check_boundary(kSmallFunction, 0x401000, 0x401013).error().listing(),
            "probe 0x401013 is outside the function's code");
}

}  // namespace
}  // namespace dprobe::arch::x86_64
