// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The stack unwinder on this test's own stack: a chain of C++ functions
// (without frame pointers: clang's -O2 omits them, and the assembly frame
// "middle" leaves rbp garbage for the frames it calls) and hand-written
// assembly frames whose CFI defines the CFA by a callee-saved register
// another frame clobbers, then libc's frames (qsort) and a real signal
// frame, all checked against the C library's own backtrace(); hand-assembled
// tables for the CFI a compiler rarely writes (PLT expressions, signal
// frames, the return stub's rules); garbage stacks and pcs; the objects
// table and the cache of rules, under concurrent readers.
#include "core/hit/stack_unwind.h"

#include <execinfo.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/auxv.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "arch/runtime/safe_memory.h"
#include "core/hit/unwind_objects.h"
#include "support/memory_faults.h"
#include "unit/core/unwind_test_fixture.h"

namespace dprobe::core {
namespace {

struct Chain;
using ChainCheck = void (*)(Chain&);

// What the chain's functions saw: the registers at the capture, and each
// function's own return address, the pcs an unwind must find.
struct Chain {
  arch::SavedRegs regs;
  uint64_t ra_of_leaf = 0;    // into level2
  uint64_t ra_of_level2 = 0;  // into level1
  uint64_t ra_of_level1 = 0;  // into the assembly frame "middle"
  uint64_t ra_of_run = 0;     // into whoever ran the chain
  ChainCheck check = nullptr;
};

}  // namespace
}  // namespace dprobe::core

// The registers of the caller as they are right after this returns (ip the
// return address, sp above it), into a SavedRegs (arch/x86_64/regs.h
// order); and two frames with CFI of their own: "outer" realigns its stack
// and defines its CFA by rbx, which "middle" saves, clobbers and restores,
// with an early return between remember_state and restore_state.
asm(R"(
  .text
  .p2align 4
  .globl dprobe_unwind_test_capture
  .hidden dprobe_unwind_test_capture
  .type dprobe_unwind_test_capture, @function
dprobe_unwind_test_capture:
  .cfi_startproc
  movq %rax, 0(%rdi)
  movq %rbx, 8(%rdi)
  movq %rcx, 16(%rdi)
  movq %rdx, 24(%rdi)
  movq %rsi, 32(%rdi)
  movq %rdi, 40(%rdi)
  movq %rbp, 48(%rdi)
  movq %r8, 64(%rdi)
  movq %r9, 72(%rdi)
  movq %r10, 80(%rdi)
  movq %r11, 88(%rdi)
  movq %r12, 96(%rdi)
  movq %r13, 104(%rdi)
  movq %r14, 112(%rdi)
  movq %r15, 120(%rdi)
  leaq 8(%rsp), %rax
  movq %rax, 56(%rdi)
  movq (%rsp), %rax
  movq %rax, 128(%rdi)
  ret
  .cfi_endproc
  .size dprobe_unwind_test_capture, .-dprobe_unwind_test_capture

  .p2align 4
  .globl dprobe_unwind_test_outer
  .hidden dprobe_unwind_test_outer
  .type dprobe_unwind_test_outer, @function
dprobe_unwind_test_outer:
  .cfi_startproc
  pushq %rbx
  .cfi_def_cfa_offset 16
  .cfi_offset %rbx, -16
  movq %rsp, %rbx
  .cfi_def_cfa_register %rbx
  andq $-64, %rsp
  subq $64, %rsp
  call dprobe_unwind_test_middle
  .globl dprobe_unwind_test_outer_ra
  .hidden dprobe_unwind_test_outer_ra
dprobe_unwind_test_outer_ra:
  movq %rbx, %rsp
  .cfi_def_cfa_register %rsp
  popq %rbx
  .cfi_def_cfa_offset 8
  .cfi_restore %rbx
  ret
  .cfi_endproc
  .size dprobe_unwind_test_outer, .-dprobe_unwind_test_outer

  .p2align 4
  .type dprobe_unwind_test_middle, @function
dprobe_unwind_test_middle:
  .cfi_startproc
  pushq %rbx
  .cfi_def_cfa_offset 16
  .cfi_offset %rbx, -16
  pushq %rbp
  .cfi_def_cfa_offset 24
  .cfi_offset %rbp, -24
  pushq %r12
  .cfi_def_cfa_offset 32
  .cfi_offset %r12, -32
  testq %rdi, %rdi
  jnz 1f
  .cfi_remember_state
  popq %r12
  .cfi_def_cfa_offset 24
  popq %rbp
  .cfi_def_cfa_offset 16
  popq %rbx
  .cfi_def_cfa_offset 8
  ret
  .cfi_restore_state
1:
  movq $0x1234, %rbx
  movq $0x5678, %rbp
  xorl %r12d, %r12d
  movq %rdi, %rax
  movq %rsi, %rdi
  call *%rax
  .globl dprobe_unwind_test_middle_ra
  .hidden dprobe_unwind_test_middle_ra
dprobe_unwind_test_middle_ra:
  popq %r12
  .cfi_def_cfa_offset 24
  popq %rbp
  .cfi_def_cfa_offset 16
  popq %rbx
  .cfi_def_cfa_offset 8
  ret
  .cfi_endproc
  .size dprobe_unwind_test_middle, .-dprobe_unwind_test_middle
)");

extern "C" {
void dprobe_unwind_test_capture(dprobe::arch::SavedRegs* regs);
void dprobe_unwind_test_outer(void (*callback)(dprobe::core::Chain*), dprobe::core::Chain* chain);
extern const char dprobe_unwind_test_outer_ra[];
extern const char dprobe_unwind_test_middle_ra[];
}

namespace dprobe::core {
namespace {

#define NOINLINE __attribute__((noinline))

uint64_t address_of(const void* p) { return reinterpret_cast<uint64_t>(p); }
uint64_t my_return_address(void* ra) { return address_of(ra); }
// A call followed by this is no tail call: its frame stays on the stack.
void barrier() { asm volatile("" ::: "memory"); }

NOINLINE void leaf(Chain* c) {
  c->ra_of_leaf = my_return_address(__builtin_return_address(0));
  dprobe_unwind_test_capture(&c->regs);
  c->check(*c);  // unwinds while every frame is still there
  barrier();
}

NOINLINE void level2(Chain* c) {
  c->ra_of_level2 = my_return_address(__builtin_return_address(0));
  leaf(c);
  barrier();
}

NOINLINE void level1(Chain* c) {
  c->ra_of_level1 = my_return_address(__builtin_return_address(0));
  level2(c);
  barrier();
}

NOINLINE void run_chain(Chain* c) {
  c->ra_of_run = my_return_address(__builtin_return_address(0));
  dprobe_unwind_test_outer(level1, c);
  barrier();
}

std::vector<uint64_t> unwind(const arch::SavedRegs& regs, uint32_t max,
                             const ReturnAddressFixup* fixup = nullptr) {
  std::vector<uint64_t> pcs(max);
  pcs.resize(unwind_stack(regs, *StackUnwindTest::objects_, pcs.data(), max, fixup));
  return pcs;
}

// The pcs the chain's own return addresses say, innermost first.
std::vector<uint64_t> expected_chain(const Chain& c) {
  // level1's return address is the label after middle's call.
  EXPECT_EQ(c.ra_of_level1, address_of(dprobe_unwind_test_middle_ra));
  return {c.regs.slot[arch::kIpSlot], c.ra_of_leaf, c.ra_of_level2, c.ra_of_level1,
          address_of(dprobe_unwind_test_outer_ra)};
}

std::vector<uint64_t> g_full;  // the last full unwind of a chain

void check_full_unwind(Chain& c) {
  g_full = unwind(c.regs, 64);
  const std::vector<uint64_t> expected = expected_chain(c);
  ASSERT_GE(g_full.size(), expected.size() + 2);
  EXPECT_EQ(std::vector<uint64_t>(g_full.begin(), g_full.begin() + 5), expected);
  // pcs[5] is inside run_chain; pcs[6] is where run_chain returns to.
  EXPECT_EQ(g_full[6], c.ra_of_run);
}

TEST_F(StackUnwindTest, UnwindsTheChainThroughCompiledAndAssemblyFrames) {
  Chain c{};
  c.check = check_full_unwind;
  run_chain(&c);
  // Down to the outermost frame (_start's undefined return address), well
  // short of the bound, through gtest and libc's start-up frames.
  EXPECT_LT(g_full.size(), 64u);
  for (uint64_t pc : g_full) EXPECT_NE(pc, 0u);
}

// libgcc's unwinder (glibc's backtrace()) as the oracle: from the same
// function, the same return addresses all the way to _start.
NOINLINE void compare_with_backtrace(std::vector<uint64_t>& ours, std::vector<uint64_t>& theirs) {
  arch::SavedRegs regs;
  dprobe_unwind_test_capture(&regs);
  void* frames[64];
  const int n = ::backtrace(frames, 64);
  barrier();
  ours = unwind(regs, 64);
  for (int i = 0; i < n; ++i) theirs.push_back(address_of(frames[i]));
}

TEST_F(StackUnwindTest, SameStackAsTheCLibrarysBacktrace) {
  Chain c{};
  c.check = [](Chain&) {
    std::vector<uint64_t> ours, theirs;
    compare_with_backtrace(ours, theirs);
    // [0] is where each was called from in compare_with_backtrace.
    ASSERT_GE(theirs.size(), 10u);
    ASSERT_EQ(ours.size(), theirs.size());
    EXPECT_EQ(std::vector<uint64_t>(ours.begin() + 1, ours.end()),
              std::vector<uint64_t>(theirs.begin() + 1, theirs.end()));
  };
  run_chain(&c);
}

TEST_F(StackUnwindTest, DepthBoundIsRespected) {
  Chain c{};
  c.check = [](Chain& chain) {
    for (uint32_t max : {0u, 1u, 3u, 5u}) {
      const std::vector<uint64_t> pcs = unwind(chain.regs, max);
      ASSERT_EQ(pcs.size(), max);
      const std::vector<uint64_t> expected = expected_chain(chain);
      EXPECT_EQ(pcs, std::vector<uint64_t>(expected.begin(), expected.begin() + max));
    }
  };
  run_chain(&c);
}

TEST_F(StackUnwindTest, UnreadableStackStopsAfterTheFirstFrame) {
  Chain c{};
  c.check = [](Chain& chain) {
    arch::SavedRegs regs = chain.regs;
    regs.slot[arch::x86_64::kSp] = 0x10;  // nothing is mapped there
    EXPECT_EQ(unwind(regs, 16), std::vector<uint64_t>{regs.slot[arch::kIpSlot]});
    regs.slot[arch::x86_64::kSp] = ~uint64_t{0} - 4;  // wraps around
    EXPECT_EQ(unwind(regs, 16).size(), 1u);
  };
  run_chain(&c);
}

TEST_F(StackUnwindTest, GarbageOnTheStackEndsTheUnwind) {
  Chain c{};
  c.check = [](Chain& chain) {
    // The leaf's frame on a stack of garbage: its return address is shown,
    // and being nowhere, ends the unwind.
    std::vector<uint64_t> garbage(64, 0x4141414141414141);
    arch::SavedRegs regs = chain.regs;
    regs.slot[arch::x86_64::kSp] = address_of(garbage.data() + 8);
    const std::vector<uint64_t> pcs = unwind(regs, 16);
    ASSERT_EQ(pcs.size(), 2u);
    EXPECT_EQ(pcs[1], 0x4141414141414141u);
  };
  run_chain(&c);
}

TEST_F(StackUnwindTest, PcWithoutUnwindInformationStops) {
  arch::SavedRegs regs{};
  std::vector<uint64_t> stack(16, 0);
  regs.slot[arch::x86_64::kSp] = address_of(stack.data());
  for (uint64_t pc : {uint64_t{0}, uint64_t{0x1000}, address_of(stack.data())}) {
    regs.slot[arch::kIpSlot] = pc;
    EXPECT_EQ(unwind(regs, 16), std::vector<uint64_t>{pc});
  }
}

// A return stub in place of the leaf's return address, as the agent's
// return probes leave it: the fixup gives the real one back, and the
// unwind goes on as if the stub were not there.
class StubFixup final : public ReturnAddressFixup {
 public:
  StubFixup(uint64_t stub, uint64_t slot, uint64_t real) : stub_(stub), slot_(slot), real_(real) {}
  uint64_t real_return_address(uint64_t address, uint64_t slot) const noexcept override {
    ++calls_;
    if (address != stub_) return address;
    return slot == slot_ ? real_ : 0;
  }
  mutable int calls_ = 0;

 private:
  uint64_t stub_, slot_, real_;
};

TEST_F(StackUnwindTest, ReturnStubIsReplacedByTheRealReturnAddress) {
  Chain c{};
  c.check = [](Chain& chain) {
    const std::vector<uint64_t> plain = unwind(chain.regs, 12);
    // The slot the leaf's return address is in, above the captured sp.
    auto* slot = reinterpret_cast<uint64_t*>(chain.regs.slot[arch::x86_64::kSp]);
    while (*slot != chain.ra_of_leaf) ++slot;
    constexpr uint64_t kStub = 0x5f5f0001;  // in no object
    *slot = kStub;
    const StubFixup fixup(kStub, address_of(slot), chain.ra_of_leaf);
    const std::vector<uint64_t> fixed = unwind(chain.regs, 12, &fixup);
    const std::vector<uint64_t> unfixed = unwind(chain.regs, 12);
    const StubFixup wrong_slot(kStub, address_of(slot) + 8, chain.ra_of_leaf);
    const std::vector<uint64_t> refused = unwind(chain.regs, 12, &wrong_slot);
    *slot = chain.ra_of_leaf;
    EXPECT_EQ(fixed, plain);
    EXPECT_EQ(fixup.calls_, 11);  // once per return address
    EXPECT_EQ(unfixed, (std::vector<uint64_t>{plain[0], kStub}));
    EXPECT_EQ(refused, std::vector<uint64_t>{plain[0]});
  };
  run_chain(&c);
}

// ---- Through libc's frames.

std::vector<uint64_t> g_pcs;
uint64_t g_caller_ra = 0;

int compare_and_unwind(const void* a, const void* b) {
  arch::SavedRegs regs;
  dprobe_unwind_test_capture(&regs);
  if (g_pcs.empty()) g_pcs = unwind(regs, 32);
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

NOINLINE void sort_here() {
  g_caller_ra = my_return_address(__builtin_return_address(0));
  int numbers[] = {3, 1, 2};
  std::qsort(numbers, 3, sizeof(int), compare_and_unwind);
  barrier();
}

bool contains(const std::vector<uint64_t>& pcs, uint64_t pc) {
  for (uint64_t p : pcs) {
    if (p == pc) return true;
  }
  return false;
}

TEST_F(StackUnwindTest, UnwindsThroughTheCLibrary) {
  g_pcs.clear();
  sort_here();
  // compare_and_unwind, qsort's frames, sort_here, then its caller.
  ASSERT_GE(g_pcs.size(), 4u);
  EXPECT_TRUE(contains(g_pcs, g_caller_ra));
}

std::vector<uint64_t> g_ours, g_theirs;

void on_signal(int, siginfo_t*, void*) {
  arch::SavedRegs regs;
  dprobe_unwind_test_capture(&regs);
  g_pcs = unwind(regs, 32);
  // raise() called from the test: nothing is holding malloc's lock.
  compare_with_backtrace(g_ours, g_theirs);
}

NOINLINE void raise_here() {
  g_caller_ra = my_return_address(__builtin_return_address(0));
  ::raise(SIGUSR1);
  barrier();
}

TEST_F(StackUnwindTest, UnwindsThroughASignalFrame) {
  for (bool on_altstack : {false, true}) {
    SCOPED_TRACE(on_altstack ? "on a signal stack" : "on the thread's stack");
    std::vector<uint8_t> altstack(64 * 1024);
    stack_t ss{};
    ss.ss_sp = altstack.data();
    ss.ss_size = altstack.size();
    stack_t old_ss{};
    ASSERT_EQ(sigaltstack(on_altstack ? &ss : nullptr, &old_ss), 0);
    struct sigaction action = {};
    struct sigaction old = {};
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO | (on_altstack ? SA_ONSTACK : 0);
    sigemptyset(&action.sa_mask);
    ASSERT_EQ(sigaction(SIGUSR1, &action, &old), 0);
    g_pcs.clear();
    g_ours.clear();
    g_theirs.clear();
    raise_here();
    sigaction(SIGUSR1, &old, nullptr);
    if (on_altstack) {
      ss.ss_flags = SS_DISABLE;
      sigaltstack(&ss, nullptr);
    }
    // on_signal, the signal's return trampoline, raise's frames in libc,
    // raise_here, then its caller.
    ASSERT_GE(g_pcs.size(), 4u);
    EXPECT_TRUE(contains(g_pcs, g_caller_ra));
    ASSERT_GE(g_theirs.size(), 4u);
    EXPECT_EQ(std::vector<uint64_t>(g_ours.begin() + 1, g_ours.end()),
              std::vector<uint64_t>(g_theirs.begin() + 1, g_theirs.end()));
  }
}

TEST_F(StackUnwindTest, CachedRulesGiveTheSameStack) {
  Chain c{};
  c.check = [](Chain& chain) {
    auto cache = std::make_unique<UnwindCache>();
    const std::vector<uint64_t> plain = unwind(chain.regs, 64);
    for (int round = 0; round < 3; ++round) {
      std::vector<uint64_t> pcs(64);
      pcs.resize(unwind_stack(chain.regs, *objects_, pcs.data(), 64, nullptr, safe_unwind_memory(),
                              cache.get()));
      EXPECT_EQ(pcs, plain);
    }
  };
  run_chain(&c);
}

// Threads unwinding through one cache while the objects table keeps
// changing: every stack is the right one, or the right one cut short
// (a reader that kept meeting the writer gives up on a frame).
UnwindCache* g_shared_cache = nullptr;
std::atomic<bool> g_stop{false};
std::atomic<int> g_wrong{0};
std::atomic<int> g_unwinds{0};
std::atomic<int> g_ready{0};
std::atomic<int> g_whole{0};

TEST_F(StackUnwindTest, ConcurrentUnwindsWhileTheTableChanges) {
  auto cache = std::make_unique<UnwindCache>();
  g_shared_cache = cache.get();
  g_stop = false;
  g_wrong = 0;
  g_unwinds = 0;
  g_ready = 0;
  g_whole = 0;
  auto reader = [] {
    Chain c{};
    c.check = [](Chain& chain) {
      const std::vector<uint64_t> plain = unwind(chain.regs, 32);  // before the writer starts
      g_ready.fetch_add(1);
      while (!g_stop.load()) {
        uint64_t pcs[32];
        const uint32_t n = unwind_stack(chain.regs, *objects_, pcs, 32, nullptr,
                                        safe_unwind_memory(), g_shared_cache);
        const bool prefix = n >= 1 && n <= plain.size() && std::equal(pcs, pcs + n, plain.begin());
        if (!prefix) g_wrong.fetch_add(1);
        if (n == plain.size()) g_whole.fetch_add(1);
        g_unwinds.fetch_add(1);
      }
    };
    run_chain(&c);
  };
  std::thread first(reader);
  std::thread second(reader);
  while (g_ready.load() < 2) std::this_thread::yield();
  const UnwindObject extra = object_at(0x10000, 0x20000);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  for (int round = 0; std::chrono::steady_clock::now() < until; ++round) {
    objects_->add(extra);
    objects_->remove(extra.text_begin);
  }
  g_stop = true;
  first.join();
  second.join();
  EXPECT_EQ(g_wrong.load(), 0);
  EXPECT_GT(g_unwinds.load(), 100);
  EXPECT_GT(g_whole.load(), 0);
}

// The cache keeps what it read until the objects table changes.
TEST_F(StackUnwindTest, LoadedObjectsIncludeThisProgramLibcAndTheVdso) {
  UnwindObject found;
  EXPECT_TRUE(objects_->find(address_of(reinterpret_cast<void*>(&run_chain)), found));
  EXPECT_TRUE(objects_->find(address_of(reinterpret_cast<void*>(&std::qsort)), found));
  const uint64_t vdso = ::getauxval(AT_SYSINFO_EHDR);
  if (vdso != 0) {
    // Its code follows its ELF header, in its first pages.
    bool code_found = false;
    for (uint64_t at = vdso; at < vdso + 0x2000 && !code_found; at += 0x10) {
      code_found = objects_->find(at, found);
    }
    EXPECT_TRUE(code_found);
  }
}

// ---- The cost of a depth-10 unwind (printed, not asserted).

NOINLINE uint64_t recurse(int depth, arch::SavedRegs* regs,
                          uint64_t (*at_bottom)(arch::SavedRegs*)) {
  const uint64_t result = depth == 0 ? (dprobe_unwind_test_capture(regs), at_bottom(regs))
                                     : recurse(depth - 1, regs, at_bottom) + 1;
  barrier();
  return result;
}

double nanoseconds_per_unwind(const arch::SavedRegs& regs, UnwindCache* cache, uint32_t& count) {
  constexpr int kRounds = 20000;
  uint64_t pcs[10];
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRounds; ++i) {
    count = unwind_stack(regs, *StackUnwindTest::objects_, pcs, 10, nullptr, safe_unwind_memory(),
                         cache);
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  return static_cast<double>(
             std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()) /
         kRounds;
}

uint64_t time_unwinds(arch::SavedRegs* regs) {
  uint32_t count = 0;
  const double cold = nanoseconds_per_unwind(*regs, nullptr, count);
  auto cache = std::make_unique<UnwindCache>();
  const double warm = nanoseconds_per_unwind(*regs, cache.get(), count);
  std::printf("[ timing   ] depth-%u unwind: %.0f ns from the tables, %.0f ns cached\n", count,
              cold, warm);
  return count;
}

TEST_F(StackUnwindTest, TimesADepthTenUnwind) {
  arch::SavedRegs regs{};
  EXPECT_EQ(recurse(12, &regs, time_unwinds), 10u + 12u);
}

}  // namespace
}  // namespace dprobe::core
