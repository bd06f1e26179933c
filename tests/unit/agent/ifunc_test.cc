// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Where an IFUNC's calls go (agent/ifunc.h), with resolvers of this test's
// own: the implementation the resolver picks, with its function's extent
// when a jump may go there, without it when the address is not where a
// function starts or a neighbour branches into its first bytes, and
// nothing for an address outside executable code. The resolver runs as
// the agent's work.
#include "agent/ifunc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "agent/hit/thread_trace.h"

namespace dprobe::agent {
namespace {

#if defined(__x86_64__)  // the functions below are x86_64's; arm64's would read alike

// A function whose second instruction a neighbour jumps to, as glibc's
// mempcpy jumps into memmove, and one alike that nothing enters: each with
// unwind information of its own, each longer than a jump's most displaced
// bytes (20), so that what comes after them is no concern of theirs.
extern "C" int dprobe_ifunc_test_entered();
extern "C" int dprobe_ifunc_test_neighbour();
extern "C" int dprobe_ifunc_test_alone();
// A function shorter than a jump's most displaced bytes (10 bytes), then,
// 16 bytes after its start, one that another function jumps to.
extern "C" int dprobe_ifunc_test_short();
extern "C" int dprobe_ifunc_test_called();
asm(R"(
  .text
  .p2align 4
  .globl dprobe_ifunc_test_entered
  .hidden dprobe_ifunc_test_entered
  .type dprobe_ifunc_test_entered, @function
dprobe_ifunc_test_entered:
  .cfi_startproc
  xorl %eax, %eax
  incl %eax
  nopl 0(%rax,%rax,1)
  nopl 0(%rax,%rax,1)
  nopl 0(%rax,%rax,1)
  nopl 0(%rax,%rax,1)
  ret
  .cfi_endproc
  .size dprobe_ifunc_test_entered, .-dprobe_ifunc_test_entered
  .p2align 4
  .globl dprobe_ifunc_test_neighbour
  .hidden dprobe_ifunc_test_neighbour
  .type dprobe_ifunc_test_neighbour, @function
dprobe_ifunc_test_neighbour:
  .cfi_startproc
  movl $2, %eax
  nopl 0(%rax,%rax,1)
  nopl 0(%rax,%rax,1)
  nopl 0(%rax,%rax,1)
  jmp dprobe_ifunc_test_entered+2
  .cfi_endproc
  .size dprobe_ifunc_test_neighbour, .-dprobe_ifunc_test_neighbour
  .p2align 4
  .globl dprobe_ifunc_test_alone
  .hidden dprobe_ifunc_test_alone
  .type dprobe_ifunc_test_alone, @function
dprobe_ifunc_test_alone:
  .cfi_startproc
  xorl %eax, %eax
  incl %eax
  nopl 0(%rax,%rax,1)
  nopl 0(%rax,%rax,1)
  nopl 0(%rax,%rax,1)
  nopl 0(%rax,%rax,1)
  ret
  .cfi_endproc
  .size dprobe_ifunc_test_alone, .-dprobe_ifunc_test_alone
  .p2align 4
  .globl dprobe_ifunc_test_short
  .hidden dprobe_ifunc_test_short
  .type dprobe_ifunc_test_short, @function
dprobe_ifunc_test_short:
  .cfi_startproc
  movl $3, %eax
  nopl 0(%rax,%rax,1)
  ret
  .cfi_endproc
  .size dprobe_ifunc_test_short, .-dprobe_ifunc_test_short
  .p2align 4
  .globl dprobe_ifunc_test_called
  .hidden dprobe_ifunc_test_called
  .type dprobe_ifunc_test_called, @function
dprobe_ifunc_test_called:
  .cfi_startproc
  movl $4, %eax
  ret
  .cfi_endproc
  .size dprobe_ifunc_test_called, .-dprobe_ifunc_test_called
  .p2align 4
  .globl dprobe_ifunc_test_caller
  .hidden dprobe_ifunc_test_caller
  .type dprobe_ifunc_test_caller, @function
dprobe_ifunc_test_caller:
  .cfi_startproc
  jmp dprobe_ifunc_test_called
  .cfi_endproc
  .size dprobe_ifunc_test_caller, .-dprobe_ifunc_test_caller
  .p2align 5, 0xcc
)");

int data_of_the_test = 5;

// What the next resolver returns, and whether it ran as the agent's work.
uint64_t g_pick = 0;
bool g_ran_as_agent_work = false;

extern "C" uint64_t test_resolver() {
  g_ran_as_agent_work = current_thread().in_agent;
  return g_pick;
}

std::optional<IfuncImplementation> resolve_to(uint64_t implementation) {
  g_pick = implementation;
  return resolve_ifunc(reinterpret_cast<uint64_t>(&test_resolver));
}

template <typename Function>
uint64_t address_of(Function* function) {
  return reinterpret_cast<uint64_t>(function);
}

// The implementation, with its function's extent from its unwind
// information: a jump may go there.
TEST(ResolveIfunc, TheImplementationWithItsFunctionsExtent) {
  const uint64_t implementation = address_of(dprobe_ifunc_test_alone);
  const auto found = resolve_to(implementation);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->address, implementation);
  EXPECT_EQ(found->function_begin, implementation);
  EXPECT_EQ(found->function_size, 21u) << "xorl, incl (2 each), 4 nopl (4 each), ret";
}

// A jump there would overwrite the instruction the neighbour jumps to.
TEST(ResolveIfunc, NoExtentWhenANeighbourBranchesIntoItsFirstBytes) {
  const uint64_t implementation = address_of(dprobe_ifunc_test_entered);
  const auto found = resolve_to(implementation);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->address, implementation);
  EXPECT_EQ(found->function_begin, implementation);
  EXPECT_EQ(found->function_size, 0u);
}

// A branch to the function after it is none of its business: only the
// bytes up to its own end could be replaced.
TEST(ResolveIfunc, ABranchPastTheFunctionsEndKeepsItsExtent) {
  ASSERT_EQ(address_of(dprobe_ifunc_test_called) - address_of(dprobe_ifunc_test_short), 16u);
  const uint64_t implementation = address_of(dprobe_ifunc_test_short);
  const auto found = resolve_to(implementation);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->function_begin, implementation);
  EXPECT_EQ(found->function_size, 10u) << "movl (5), nopl (4), ret";
}

TEST(ResolveIfunc, NoExtentWhereNoFunctionStarts) {
  const uint64_t inside = address_of(dprobe_ifunc_test_alone) + 2;
  const auto found = resolve_to(inside);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->address, inside);
  EXPECT_EQ(found->function_begin, inside);
  EXPECT_EQ(found->function_size, 0u);
}

TEST(ResolveIfunc, NothingForAnAddressOutsideExecutableCode) {
  EXPECT_FALSE(resolve_to(0)) << "the resolver found none";
  EXPECT_FALSE(resolve_to(reinterpret_cast<uint64_t>(&data_of_the_test))) << "data";
  const auto heap = std::make_unique<int>(1);
  EXPECT_FALSE(resolve_to(reinterpret_cast<uint64_t>(heap.get()))) << "the heap";
}

// A probe on the resolver, or on what it calls, is not the program's.
TEST(ResolveIfunc, TheResolverRunsAsTheAgentsWork) {
  current_thread().in_agent = false;
  g_ran_as_agent_work = false;
  ASSERT_TRUE(resolve_to(address_of(dprobe_ifunc_test_alone)));
  EXPECT_TRUE(g_ran_as_agent_work);
  EXPECT_FALSE(current_thread().in_agent) << "still the agent's work after";
}

#endif  // __x86_64__

}  // namespace
}  // namespace dprobe::agent
