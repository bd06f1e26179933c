// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Rewritten system call sites (optimize.h, "System call sites"): which
// instructions a site's jump displaces, and its trampoline's bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "arch/x86_64/classify.h"
#include "arch/x86_64/decoder.h"
#include "arch/x86_64/optimize.h"

namespace dprobe::arch::x86_64 {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kFunction = 0x401000;

// getppid's shape in glibc:
// 0x401000: b8 6e 00 00 00    mov eax, 0x6e
// 0x401005: 0f 05             syscall
// 0x401007: c3                ret
const Bytes kGetppid = {0xb8, 0x6e, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3};

Result<OptimizePlan, std::string> plan_for(const Bytes& code, uint64_t syscall_at) {
  return can_rewrite_syscall(code, kFunction, syscall_at, {});
}

TEST(X86SyscallSite, DisplacesTheInstructionsEndingWithTheSyscall) {
  auto plan = plan_for(kGetppid, 0x401005);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->address, kFunction);
  EXPECT_EQ(plan->displaced_length, 7);
  ASSERT_EQ(plan->displaced.size(), 2u);
  EXPECT_EQ(plan->displaced.back().address, 0x401005u);
}

TEST(X86SyscallSite, TakesNoMoreThanAJumpsWorth) {
  // 0x401000: 48 89 f8 mov rax, rdi; 0x401003: 48 89 f7 mov rdi, rsi;
  // 0x401006: 48 89 d6 mov rsi, rdx; 0x401009: 0f 05 syscall; 0x40100b: c3 ret
  const Bytes code = {0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6, 0x0f, 0x05, 0xc3};
  auto plan = plan_for(code, 0x401009);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->address, 0x401006u);  // 3 + 2 bytes
  EXPECT_EQ(plan->displaced_length, 5);
}

TEST(X86SyscallSite, RefusesTooFewBytesFromTheFunctionsStart) {
  // xor eax, eax; syscall; ret: 4 bytes up to the syscall's end.
  auto plan = plan_for({0x31, 0xc0, 0x0f, 0x05, 0xc3}, 0x401002);
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error(), HasSubstr("4 bytes"));
}

TEST(X86SyscallSite, RefusesAnAddressThatIsNoSyscall) {
  auto plan = plan_for(kGetppid, 0x401000);
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error(), HasSubstr("no syscall"));
}

TEST(X86SyscallSite, RefusesABranchIntoTheDisplacedInstructions) {
  // 0x401000: 75 05 jne 0x401007 (the syscall); 0x401002: b8 27 00 00 00 mov eax, 0x27;
  // 0x401007: 0f 05 syscall; 0x401009: c3 ret
  const Bytes code = {0x75, 0x05, 0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3};
  auto plan = plan_for(code, 0x401007);
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error(), HasSubstr("inside the replaced bytes"));
}

TEST(X86SyscallSite, RefusesABranchAmongTheInstructionsBeforeIt) {
  // 0x401000: 90 nop; 0x401001: 74 00 je +0; 0x401003: 90 nop; 0x401004: 0f 05 syscall; c3 ret
  const Bytes code = {0x90, 0x74, 0x00, 0x90, 0x0f, 0x05, 0xc3};
  auto plan = plan_for(code, 0x401004);
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error(), HasSubstr("branch"));
}

// ---- The trampoline ---------------------------------------------------------

constexpr SyscallTrampolineSpec kSpec = {0x402000, 0x7f1234560000, 0x7f1234570000, 0x401005};

struct Written {
  std::array<uint8_t, kSyscallTrampolineSize> bytes{};
  size_t size = 0;
  std::vector<Insn> code;  // up to and with the jump back
};

Written write(const OptimizePlan& plan) {
  Written w;
  auto n = write_syscall_trampoline(plan, kSpec, w.bytes);
  EXPECT_TRUE(n) << n.error();
  if (!n) return w;
  w.size = *n;
  size_t at = 0;
  while (at < w.size) {
    auto insn = decode_insn(std::span(w.bytes).subspan(at, w.size - at), kSpec.address + at);
    if (!insn) break;
    w.code.push_back(*insn);
    at += insn->length;
    if (classify_insn(*insn).branch == Branch::kJmpRel) break;  // the jump back
  }
  return w;
}

bool is_syscall(const Insn& insn) {
  return insn.length == 2 && insn.bytes[0] == 0x0f && insn.bytes[1] == 0x05;
}

TEST(X86SyscallSiteTrampoline, CopiesFirstThenCallsAroundTheSyscallThenJumpsBack) {
  auto plan = plan_for(kGetppid, 0x401005);
  ASSERT_TRUE(plan) << plan.error();
  const Written w = write(*plan);
  ASSERT_GE(w.code.size(), 4u);
  // The mov, copied at offset 0: a thread found there moves to the same offset.
  EXPECT_THAT(std::span(w.bytes).first(5), ElementsAre(0xb8, 0x6e, 0x00, 0x00, 0x00));
  int syscalls = 0;
  int calls = 0;
  size_t syscall_index = 0;
  for (size_t i = 0; i < w.code.size(); ++i) {
    if (is_syscall(w.code[i])) {
      ++syscalls;
      syscall_index = i;
    }
    if (classify_insn(w.code[i]).branch == Branch::kCallIndirect) ++calls;
  }
  EXPECT_EQ(syscalls, 1);
  EXPECT_EQ(calls, 2);  // enter before the syscall, exit after it
  EXPECT_GT(syscall_index, 1u);
  const Classified back = classify_insn(w.code.back());
  EXPECT_EQ(back.branch, Branch::kJmpRel);
  EXPECT_EQ(back.target, 0x401007u);  // after the syscall
  EXPECT_LE(w.size, kSyscallTrampolineSize);
}

uint64_t word_at(std::span<const uint8_t> bytes, size_t at) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) value |= uint64_t{bytes[at + i]} << (8 * i);
  return value;
}

// The call goes where enter says in rcx (which the syscall overwrites
// anyway): the links at the trampoline's end name the site, the first
// gadget, the trampoline's own syscall and the second gadget. The first
// gadget makes the call and jumps back to the exit call, the instruction
// after the trampoline's syscall; the second jumps straight back after
// the site.
TEST(X86SyscallSiteTrampoline, TheCallIsMadeWhereEnterSaysFromTheGadgetOrTheTrampoline) {
  auto plan = plan_for(kGetppid, 0x401005);
  ASSERT_TRUE(plan) << plan.error();
  SyscallTrampolineSpec spec = kSpec;
  spec.gadget = 0x7f1234580010;
  std::array<uint8_t, kSyscallTrampolineSize> out{};
  std::array<uint8_t, kSyscallGadgetSize> gadget{};
  auto n = write_syscall_trampoline(*plan, spec, out, gadget);
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(*n, kSyscallTrampolineSize);
  EXPECT_EQ(word_at(out, kSyscallLinksOffset), kSpec.site);
  EXPECT_EQ(word_at(out, kSyscallLinksOffset + 8), spec.gadget);
  const uint64_t plain = word_at(out, kSyscallLinksOffset + 16);
  ASSERT_GT(plain, spec.address);
  const size_t at = plain - spec.address;
  ASSERT_LT(at + 2, kSyscallLinksOffset);
  EXPECT_THAT(std::span(out).subspan(at - 2, 4), ElementsAre(0xff, 0xe1, 0x0f, 0x05))
      << "jmp *%rcx, then the trampoline's own syscall";
  EXPECT_EQ(word_at(out, kSyscallLinksOffset + 24), spec.gadget + 16);
  // Each gadget: syscall, then jmp *0(%rip) to its way back.
  EXPECT_THAT(std::span(gadget).first(8), ElementsAre(0x0f, 0x05, 0xff, 0x25, 0, 0, 0, 0));
  EXPECT_EQ(word_at(gadget, 8), plain + 2);
  EXPECT_THAT(std::span(gadget).subspan(16, 8), ElementsAre(0x0f, 0x05, 0xff, 0x25, 0, 0, 0, 0));
  EXPECT_EQ(word_at(gadget, 24), 0x401007u);  // after the site's syscall
  // Without gadgets both ways with an exit call are the trampoline's
  // syscall, and there is none without.
  auto alone = write_syscall_trampoline(*plan, kSpec, out);
  ASSERT_TRUE(alone) << alone.error();
  EXPECT_EQ(word_at(out, kSyscallLinksOffset + 8), word_at(out, kSyscallLinksOffset + 16));
  EXPECT_EQ(word_at(out, kSyscallLinksOffset + 24), 0u);
}

TEST(X86SyscallSiteTrampoline, RefusesAPlanThatDoesNotEndWithASyscall) {
  const Bytes code = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0x31, 0xc0, 0xc9, 0xc3};
  auto plan = can_optimize(code, kFunction, kFunction, {});
  ASSERT_TRUE(plan) << plan.error();
  std::array<uint8_t, kSyscallTrampolineSize> out{};
  auto n = write_syscall_trampoline(*plan, kSpec, out);
  ASSERT_FALSE(n);
  EXPECT_THAT(n.error(), HasSubstr("syscall"));
}

}  // namespace
}  // namespace dprobe::arch::x86_64
