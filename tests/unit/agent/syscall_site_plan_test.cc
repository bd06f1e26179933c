// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Which syscall instructions the agent rewrites into jumps, and where the
// replaced instructions start (agent/syscall_site_plan.h): in functions of
// this test's own with unwind information, never in the vDSO, never in
// code without unwind tables, never where too few bytes come before the
// syscall in its function.
#include "agent/syscall_site_plan.h"

#include <gtest/gtest.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <span>

namespace dprobe::agent {
namespace {

#if defined(__x86_64__)  // the functions below are x86_64's

// getpid, with an instruction before the one that sets its number, and a
// syscall right at a function's start.
extern "C" char dprobe_site_test_getpid[];
extern "C" char dprobe_site_test_getpid_syscall[];
extern "C" char dprobe_site_test_getpid_end[];
extern "C" char dprobe_site_test_bare[];
asm(R"(
  .text
  .p2align 4
  .globl dprobe_site_test_getpid, dprobe_site_test_getpid_syscall, dprobe_site_test_getpid_end
  .hidden dprobe_site_test_getpid, dprobe_site_test_getpid_syscall, dprobe_site_test_getpid_end
  .type dprobe_site_test_getpid, @function
dprobe_site_test_getpid:
  .cfi_startproc
  xorl %edi, %edi
  movl $39, %eax
dprobe_site_test_getpid_syscall:
  syscall
  ret
  .cfi_endproc
dprobe_site_test_getpid_end:
  .size dprobe_site_test_getpid, .-dprobe_site_test_getpid
  .p2align 4
  .globl dprobe_site_test_bare
  .hidden dprobe_site_test_bare
  .type dprobe_site_test_bare, @function
dprobe_site_test_bare:
  .cfi_startproc
  syscall
  ret
  .cfi_endproc
  .size dprobe_site_test_bare, .-dprobe_site_test_bare
)");

uint64_t address_of(const char* label) { return reinterpret_cast<uint64_t>(label); }

// The jump replaces `movl $39, %eax; syscall` (7 bytes, the fewest
// instructions of 5 or more ending with the syscall), in a function
// bounded by its unwind information.
TEST(RewriteSiteFor, TheInstructionsEndingWithTheSyscallInTheirFunction) {
  const auto site = rewrite_site_for(address_of(dprobe_site_test_getpid_syscall));
  ASSERT_TRUE(site);
  EXPECT_EQ(site->address, address_of(dprobe_site_test_getpid) + 2);
  EXPECT_EQ(site->function_address, address_of(dprobe_site_test_getpid));
  EXPECT_EQ(site->function_size,
            address_of(dprobe_site_test_getpid_end) - address_of(dprobe_site_test_getpid));
}

TEST(RewriteSiteFor, NoneWhereNoSyscallIs) {
  EXPECT_FALSE(rewrite_site_for(address_of(dprobe_site_test_getpid))) << "the xorl";
  EXPECT_FALSE(rewrite_site_for(address_of(dprobe_site_test_getpid_syscall) + 2)) << "the ret";
}

TEST(RewriteSiteFor, NoneWithTooFewBytesBeforeTheSyscallInItsFunction) {
  EXPECT_FALSE(rewrite_site_for(address_of(dprobe_site_test_bare)));
}

// Code made at run time has no unwind tables: its function's extent is
// not known, nor what branches into it.
TEST(RewriteSiteFor, NoneInCodeWithoutUnwindTables) {
  constexpr uint8_t kGetpid[] = {0x31, 0xff, 0xb8, 0x27, 0, 0, 0, 0x0f, 0x05, 0xc3};
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  std::memcpy(page, kGetpid, sizeof(kGetpid));
  ASSERT_EQ(::mprotect(page, 4096, PROT_READ | PROT_EXEC), 0);
  const auto site = rewrite_site_for(reinterpret_cast<uint64_t>(page) + 7);
  ::munmap(page, 4096);
  EXPECT_FALSE(site);
}

// The vDSO's fallbacks make real system calls (`movl $nr, %eax; syscall`),
// in functions with unwind information: still the kernel's text.
TEST(RewriteSiteFor, NoneInTheVdso) {
  const uint64_t base = ::getauxval(AT_SYSINFO_EHDR);
  if (base == 0) GTEST_SKIP() << "no vDSO";
  const std::span<const uint8_t> text(reinterpret_cast<const uint8_t*>(base), 4096);
  uint64_t syscall_at = 0;
  for (size_t i = 0; i + 7 <= text.size() && syscall_at == 0; ++i) {
    const bool mov_eax = text[i] == 0xb8 && text[i + 3] == 0 && text[i + 4] == 0;
    if (mov_eax && text[i + 5] == 0x0f && text[i + 6] == 0x05) syscall_at = base + i + 5;
  }
  if (syscall_at == 0) GTEST_SKIP() << "no `movl $nr, %eax; syscall` in the vDSO's first page";
  EXPECT_FALSE(rewrite_site_for(syscall_at));
}

#endif  // __x86_64__

}  // namespace
}  // namespace dprobe::agent
