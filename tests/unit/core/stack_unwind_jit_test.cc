// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The stack unwinder through code no table covers, by its frame pointer:
// a real JIT frame (code written into an anonymous mapping at run time,
// as V8 and HotSpot do, calling back into compiled code), made-up stacks
// where frame-pointer frames and CFI frames alternate, and the frame
// pointers that must end the stack: a loop in the chain, one below sp, a
// misaligned one, one too far up.
#include <execinfo.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/hit/stack_unwind.h"
#include "unit/core/unwind_test_fixture.h"

extern "C" {
// tests/unit/core/stack_unwind_test.cc: leaf assembly with CFI "CFA = rsp
// + 8" all through, which stores the registers of its caller.
void dprobe_unwind_test_capture(dprobe::arch::SavedRegs* regs);
}

namespace dprobe::core {
namespace {

#define NOINLINE __attribute__((noinline))

uint64_t address_of(const void* p) { return reinterpret_cast<uint64_t>(p); }
void barrier() { asm volatile("" ::: "memory"); }

std::vector<uint64_t> unwind(const arch::SavedRegs& regs, uint32_t max = 32,
                             const ReturnAddressFixup* fixup = nullptr) {
  std::vector<uint64_t> pcs(max);
  pcs.resize(unwind_stack(regs, *StackUnwindTest::objects_, pcs.data(), max, fixup));
  return pcs;
}

// ---- A real JIT frame.

// push rbp; mov rbp, rsp; call *rsi; pop rbp; ret: the prologue and
// epilogue of V8's and HotSpot's frames around a call of the second
// argument with the first.
constexpr uint8_t kJitCode[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd6, 0x5d, 0xc3};
constexpr uint64_t kJitReturnOffset = 6;  // after the call

class JitCode {
 public:
  JitCode() {
    void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return;
    std::memcpy(page, kJitCode, sizeof kJitCode);
    if (::mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) {
      ::munmap(page, 4096);
      return;
    }
    page_ = page;
  }
  ~JitCode() {
    if (page_ != nullptr) ::munmap(page_, 4096);
  }
  JitCode(const JitCode&) = delete;
  JitCode& operator=(const JitCode&) = delete;

  bool ready() const { return page_ != nullptr; }
  uint64_t address() const { return address_of(page_); }
  void call(void* argument, void (*callee)(void*)) const {
    reinterpret_cast<void (*)(void*, void (*)(void*))>(page_)(argument, callee);
  }

 private:
  void* page_ = nullptr;
};

struct ThroughJit {
  const JitCode* jit = nullptr;
  std::vector<uint64_t> ours;    // the unwind from the callee of the JIT frame
  std::vector<uint64_t> theirs;  // backtrace() in the JIT frame's caller
};

NOINLINE void unwind_here(void* argument) {
  auto* through = static_cast<ThroughJit*>(argument);
  arch::SavedRegs regs;
  dprobe_unwind_test_capture(&regs);
  through->ours = unwind(regs);
  barrier();
}

NOINLINE void call_through_jit(ThroughJit* through) {
  void* frames[32];
  const int n = ::backtrace(frames, 32);
  for (int i = 0; i < n; ++i) through->theirs.push_back(address_of(frames[i]));
  through->jit->call(through, unwind_here);
  barrier();
}

TEST_F(StackUnwindTest, GoesThroughAJitFrameByItsFramePointer) {
  const JitCode jit;
  ASSERT_TRUE(jit.ready());
  ThroughJit through;
  through.jit = &jit;
  call_through_jit(&through);
  const std::vector<uint64_t>& ours = through.ours;
  const std::vector<uint64_t>& theirs = through.theirs;
  // ours: unwind_here, the JIT frame, call_through_jit, then its callers;
  // theirs: call_through_jit, then the same callers (libgcc's unwinder
  // stops at the JIT frame: no FDE covers it).
  ASSERT_GE(theirs.size(), 5u);
  ASSERT_EQ(ours.size(), theirs.size() + 2);
  EXPECT_EQ(ours[1], jit.address() + kJitReturnOffset);
  EXPECT_EQ(std::vector<uint64_t>(ours.begin() + 3, ours.end()),
            std::vector<uint64_t>(theirs.begin() + 1, theirs.end()));
}

// ---- Made-up stacks.

// Return addresses in no object.
constexpr uint64_t kJit0 = 0x10010;
constexpr uint64_t kJit1 = 0x10020;
constexpr uint64_t kJit2 = 0x10030;
constexpr uint64_t kJit3 = 0x10040;

// A stack of words, 16-byte aligned, and registers that point into it.
class MadeUpStack {
 public:
  explicit MadeUpStack(size_t words = 64) : words_(words + 2, 0) {
    base_ = (address_of(words_.data()) + 15) & ~uint64_t{15};
  }
  uint64_t at(size_t index) const { return base_ + 8 * index; }
  void set(size_t index, uint64_t value) {
    std::memcpy(reinterpret_cast<void*>(at(index)), &value, sizeof value);
  }
  // The frame record at word `index`: the caller's fp, the return address.
  void record(size_t index, uint64_t caller_fp, uint64_t ra) {
    set(index, caller_fp);
    set(index + 1, ra);
  }
  arch::SavedRegs regs(uint64_t pc, uint64_t sp, uint64_t fp) const {
    arch::SavedRegs regs{};
    regs.slot[arch::kIpSlot] = pc;
    regs.slot[arch::kSpSlot] = sp;
    regs.slot[arch::x86_64::kBp] = fp;
    return regs;
  }

 private:
  std::vector<uint64_t> words_;
  uint64_t base_ = 0;
};

TEST_F(StackUnwindTest, FramePointerFramesAndCfiFramesAlternate) {
  // A return address inside the capture function, whose CFI says: CFA =
  // rsp + 8, the return address at [rsp].
  const uint64_t cfi = address_of(reinterpret_cast<const void*>(dprobe_unwind_test_capture)) + 4;
  MadeUpStack s;
  s.set(0, kJit0);            // the CFI frame's return address
  s.record(2, s.at(6), cfi);  // the JIT frame's record: back into CFI code
  s.set(4, kJit1);            // the CFI frame's return address, at its CFA - 8
  s.record(6, 0, kJit2);      // the next JIT frame's: its caller has no frame pointer
  EXPECT_EQ(unwind(s.regs(cfi, s.at(0), s.at(2))),
            (std::vector<uint64_t>{cfi, kJit0, cfi, kJit1, kJit2}));
}

TEST_F(StackUnwindTest, LoopInTheFramePointerChainEndsTheStack) {
  MadeUpStack s;
  s.record(2, s.at(2), kJit1);  // points at itself
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(0), s.at(2))), (std::vector<uint64_t>{kJit0, kJit1}));
  MadeUpStack t;
  t.record(2, t.at(6), kJit1);  // two records pointing at each other
  t.record(6, t.at(2), kJit2);
  EXPECT_EQ(unwind(t.regs(kJit0, t.at(0), t.at(2))), (std::vector<uint64_t>{kJit0, kJit1, kJit2}));
}

TEST_F(StackUnwindTest, FramePointerBelowTheStackPointerEndsTheStack) {
  MadeUpStack s;
  s.record(2, s.at(8), kJit1);
  s.record(8, 0, kJit2);
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(4), s.at(2))), std::vector<uint64_t>{kJit0});
  // The same record at the stack pointer is a frame.
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(2), s.at(2))), (std::vector<uint64_t>{kJit0, kJit1, kJit2}));
}

TEST_F(StackUnwindTest, MisalignedFramePointerEndsTheStack) {
  MadeUpStack s;
  s.record(2, 0, kJit1);
  s.record(4, 0, kJit2);
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(0), s.at(2) + 4)), std::vector<uint64_t>{kJit0});
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(0), s.at(2) + 1)), std::vector<uint64_t>{kJit0});
  // A caller's misaligned frame pointer ends the stack after its frame.
  s.record(2, s.at(4) + 4, kJit1);
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(0), s.at(2))), (std::vector<uint64_t>{kJit0, kJit1}));
}

TEST_F(StackUnwindTest, FramePointerFarAboveTheStackPointerEndsTheStack) {
  constexpr size_t kMiB = (1u << 20) / 8;  // words
  MadeUpStack s(kMiB + 64);
  s.record(kMiB - 2, 0, kJit1);  // just within a MiB of sp
  s.record(kMiB + 8, 0, kJit2);  // beyond
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(0), s.at(kMiB - 2))), (std::vector<uint64_t>{kJit0, kJit1}));
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(0), s.at(kMiB + 8))), std::vector<uint64_t>{kJit0});
}

TEST_F(StackUnwindTest, ZeroReturnAddressOrUnreadableRecordEndsTheStack) {
  MadeUpStack s;
  s.record(2, 0, 0);
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(0), s.at(2))), std::vector<uint64_t>{kJit0});
  EXPECT_EQ(unwind(s.regs(kJit0, 0x1000, 0x2000)), std::vector<uint64_t>{kJit0});
}

// A return probe's stub in a JIT frame's record: the fixup is asked with
// the record's slot, as for a return address the tables locate.
class OneStub final : public ReturnAddressFixup {
 public:
  OneStub(uint64_t stub, uint64_t slot, uint64_t real) : stub_(stub), slot_(slot), real_(real) {}
  uint64_t real_return_address(uint64_t address, uint64_t slot) const noexcept override {
    if (address != stub_) return address;
    return slot == slot_ ? real_ : 0;
  }

 private:
  uint64_t stub_, slot_, real_;
};

TEST_F(StackUnwindTest, ReturnStubInAFrameRecordIsReplaced) {
  MadeUpStack s;
  s.record(2, s.at(4), kJit3);  // kJit3 stands for the stub
  s.record(4, 0, kJit2);
  const OneStub fixup(kJit3, s.at(3), kJit1);
  EXPECT_EQ(unwind(s.regs(kJit0, s.at(0), s.at(2)), 32, &fixup),
            (std::vector<uint64_t>{kJit0, kJit1, kJit2}));
}

}  // namespace
}  // namespace dprobe::core
