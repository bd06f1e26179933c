// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The x86_64 jump optimizer's trampolines run for real: a function in an
// executable page, probed by a jump, called through a pointer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "arch/x86_64/optimize.h"
#include "arch/x86_64/regs.h"
#include "unit/arch/x86_64_optimize_cases.h"

#if defined(__x86_64__) && defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace dprobe::arch::x86_64 {
namespace {

using ::testing::ElementsAreArray;

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

// The commonest small function, probed at its entry: its ret runs from the
// trampoline and returns to the caller, as from the function.
// offset 0x00: 48 8d 04 37        lea rax, [rdi+rsi]
//        0x04: c3                 ret
const Bytes kLeafSum = {0x48, 0x8d, 0x04, 0x37, 0xc3};

TEST(X86OptimizeRun, ALeafsRetRunsFromTheTrampoline) {
  ExecutablePage page;
  ASSERT_TRUE(page.ok());
  std::memcpy(page.bytes(), kLeafSum.data(), kLeafSum.size());
  install(page, kLeafSum, 0);
  if (::testing::Test::HasFatalFailure()) return;
  auto f = reinterpret_cast<uint64_t (*)(uint64_t, uint64_t)>(page.bytes());
  EXPECT_EQ(f(2, 3), 5u);
  EXPECT_EQ(f(40, 2), 42u);
  EXPECT_EQ(g_hit.count, 2);
  EXPECT_EQ(g_hit.regs.slot[kDi], 40u);
  EXPECT_EQ(g_hit.regs.slot[kIp], page.address());
}

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
