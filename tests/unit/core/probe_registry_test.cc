// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The registry on real code of this test binary: probes prepared on the
// instructions of small assembly functions, armed (a breakpoint byte read
// back, never executed), found by address, and disarmed to the exact
// original bytes; and every way an add is refused.
#include "core/probe_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "arch/runtime/safe_memory.h"
#include "core/text_patcher.h"
#include "support/memory_faults.h"

extern "C" {
// Returns 0x12345679.
int dprobe_test_probed();
// Returns its own address, through a RIP-relative lea.
uint64_t dprobe_test_rip();
// Instructions no probe may take.
void dprobe_test_traps();
// Runs the prologue of dprobe_test_probed, then jumps to `where`.
int dprobe_test_enter_at(uint64_t where);
// Jumps to `where` with the caller's return address on the stack.
uint64_t dprobe_test_jump_to(uint64_t where);
}

__asm__(R"(
  .pushsection .text
  .p2align 4
  .globl dprobe_test_probed
  .hidden dprobe_test_probed
  .type dprobe_test_probed, @function
dprobe_test_probed:
  .byte 0x55                          # +0   push rbp
  .byte 0x48, 0x89, 0xe5              # +1   mov rbp, rsp
  .byte 0xb8, 0x78, 0x56, 0x34, 0x12  # +4   mov eax, 0x12345678
  .byte 0x83, 0xc0, 0x01              # +9   add eax, 1
  .byte 0x5d                          # +12  pop rbp
  .byte 0xc3                          # +13  ret
  .size dprobe_test_probed, .-dprobe_test_probed

  .p2align 4
  .globl dprobe_test_rip
  .hidden dprobe_test_rip
  .type dprobe_test_rip, @function
dprobe_test_rip:
  .byte 0x48, 0x8d, 0x05, 0xf9, 0xff, 0xff, 0xff  # +0  lea rax, [rip-7]
  .byte 0xc3                                      # +7  ret
  .size dprobe_test_rip, .-dprobe_test_rip

  .p2align 4
  .globl dprobe_test_traps
  .hidden dprobe_test_traps
  .type dprobe_test_traps, @function
dprobe_test_traps:
  .byte 0xcc                          # +0  int3
  .byte 0x0f, 0x0b                    # +1  ud2
  .byte 0xc3                          # +3  ret
  .size dprobe_test_traps, .-dprobe_test_traps

  .p2align 4
  .globl dprobe_test_enter_at
  .hidden dprobe_test_enter_at
  .type dprobe_test_enter_at, @function
dprobe_test_enter_at:
  .byte 0x55                          # push rbp
  .byte 0x48, 0x89, 0xe5              # mov rbp, rsp
  .byte 0xff, 0xe7                    # jmp rdi
  .size dprobe_test_enter_at, .-dprobe_test_enter_at

  .p2align 4
  .globl dprobe_test_jump_to
  .hidden dprobe_test_jump_to
  .type dprobe_test_jump_to, @function
dprobe_test_jump_to:
  .byte 0xff, 0xe7                    # jmp rdi
  .size dprobe_test_jump_to, .-dprobe_test_jump_to
  .popsection
)");

namespace dprobe::core {
namespace {

// The trap handler's view, as a test takes it: no writer runs meanwhile.
const Probe* find(const ProbeRegistry& registry, uint64_t address) {
  return ProbeRegistry::Reader(registry).find(address);
}
const Probe* find_by_slot(const ProbeRegistry& registry, uint64_t pc) {
  return ProbeRegistry::Reader(registry).find_by_slot(pc);
}
const Probe* find_by_id(const ProbeRegistry& registry, uint32_t id) {
  return ProbeRegistry::Reader(registry).find_by_id(id);
}

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr size_t kProbedBytes = 14;
constexpr size_t kRipBytes = 8;
constexpr size_t kTrapsBytes = 4;

uint64_t probed() { return reinterpret_cast<uintptr_t>(&dprobe_test_probed); }
uint64_t rip_function() { return reinterpret_cast<uintptr_t>(&dprobe_test_rip); }
uint64_t traps() { return reinterpret_cast<uintptr_t>(&dprobe_test_traps); }

// Code bytes read through /proc/self/mem, as a debugger would: never run.
std::vector<uint8_t> code_at(uint64_t address, size_t size) {
  std::vector<uint8_t> bytes(size);
  auto patcher = TextPatcher::open();
  if (!patcher || !patcher->read(address, bytes)) ADD_FAILURE() << "cannot read code";
  return bytes;
}

// The registry reads code with the fault-safe copies, as the agent does
// with its SIGSEGV handler in place.
class ProbeRegistryTest : public support::MemoryFaultTest {
 protected:
  void SetUp() override {
    probed_original_ = code_at(probed(), kProbedBytes);
    rip_original_ = code_at(rip_function(), kRipBytes);
    traps_original_ = code_at(traps(), kTrapsBytes);
    // As assembled: no breakpoint left over, nothing to run into.
    ASSERT_EQ(probed_original_, (std::vector<uint8_t>{0x55, 0x48, 0x89, 0xe5, 0xb8, 0x78, 0x56,
                                                      0x34, 0x12, 0x83, 0xc0, 0x01, 0x5d, 0xc3}));
    ASSERT_EQ(rip_original_,
              (std::vector<uint8_t>{0x48, 0x8d, 0x05, 0xf9, 0xff, 0xff, 0xff, 0xc3}));
    ASSERT_EQ(traps_original_, (std::vector<uint8_t>{0xcc, 0x0f, 0x0b, 0xc3}));
    ASSERT_EQ(dprobe_test_probed(), 0x12345679);
  }

  // Whatever a test left armed, the functions get their bytes back.
  void TearDown() override {
    auto patcher = TextPatcher::open();
    ASSERT_TRUE(patcher);
    ASSERT_TRUE(patcher->write(probed(), probed_original_));
    ASSERT_TRUE(patcher->write(rip_function(), rip_original_));
    ASSERT_TRUE(patcher->write(traps(), traps_original_));
  }

  static ProbeRegistry make_registry() {
    auto registry = ProbeRegistry::create();
    if (!registry) {
      ADD_FAILURE() << registry.error().message;
      std::abort();
    }
    return std::move(*registry);
  }

  std::vector<uint8_t> probed_original_;
  std::vector<uint8_t> rip_original_;
  std::vector<uint8_t> traps_original_;
};

ProbeSite site(uint64_t function, uint64_t offset, uint64_t size = kProbedBytes) {
  return {function + offset, function, size};
}

TEST_F(ProbeRegistryTest, AddPreparesAProbeWithASlotAndTheOriginalByte) {
  ProbeRegistry registry = make_registry();
  auto added = registry.add(site(probed(), 4), 7);
  ASSERT_TRUE(added) << added.error().message;
  EXPECT_EQ(registry.size(), 1u);
  // Prepared and published, not armed: the code is untouched.
  EXPECT_EQ(code_at(probed(), kProbedBytes), probed_original_);
  ASSERT_NE(find(registry, probed() + 4), nullptr);
  EXPECT_FALSE(find(registry, probed() + 4)->armed);

  ASSERT_TRUE(registry.arm_all());
  const Probe* probe = find(registry, probed() + 4);
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->address, probed() + 4);
  EXPECT_THAT(probe->handlers, ElementsAre(7u));
  EXPECT_THAT(probe->original, ElementsAre(0xb8));
  EXPECT_TRUE(probe->armed);
  EXPECT_EQ(probe->insn.insn.length, 5);
  EXPECT_NE(probe->slot, 0u);
  const uint64_t distance =
      probe->slot > probe->address ? probe->slot - probe->address : probe->address - probe->slot;
  EXPECT_LT(distance, SlotAllocator::kReach);
  registry.disarm_all();
}

TEST_F(ProbeRegistryTest, ArmWritesTheBreakpointAndDisarmRestoresTheBytes) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 4), 0));
  auto armed = registry.arm_all();
  ASSERT_TRUE(armed) << armed.error().message;

  std::vector<uint8_t> expected = probed_original_;
  expected[4] = 0xcc;
  EXPECT_EQ(code_at(probed(), kProbedBytes), expected);

  registry.disarm_all();
  ASSERT_EQ(code_at(probed(), kProbedBytes), probed_original_);
  const Probe* probe = find(registry, probed() + 4);
  ASSERT_NE(probe, nullptr);
  EXPECT_FALSE(probe->armed);
  EXPECT_EQ(dprobe_test_probed(), 0x12345679);  // runs as before
}

TEST_F(ProbeRegistryTest, SeveralProbesArmAndDisarmTogether) {
  ProbeRegistry registry = make_registry();
  for (const uint64_t offset : {0u, 1u, 9u, 12u, 13u}) {
    auto added = registry.add(site(probed(), offset), static_cast<uint32_t>(offset));
    ASSERT_TRUE(added) << offset << ": " << added.error().message;
  }
  EXPECT_EQ(registry.size(), 5u);
  ASSERT_TRUE(registry.arm_all());
  const std::vector<uint8_t> armed = {0xcc, 0xcc, 0x89, 0xe5, 0xb8, 0x78, 0x56,
                                      0x34, 0x12, 0xcc, 0xc0, 0x01, 0xcc, 0xcc};
  EXPECT_EQ(code_at(probed(), kProbedBytes), armed);
  for (const uint64_t offset : {0u, 1u, 9u, 12u, 13u}) {
    const Probe* probe = find(registry, probed() + offset);
    ASSERT_NE(probe, nullptr) << offset;
    EXPECT_THAT(probe->handlers, ElementsAre(offset));
    EXPECT_THAT(probe->original, ElementsAre(probed_original_[offset]));
  }
  EXPECT_EQ(find(registry, probed() + 4), nullptr);
  EXPECT_EQ(find(registry, probed() + 2), nullptr);

  registry.disarm_all();
  ASSERT_EQ(code_at(probed(), kProbedBytes), probed_original_);
  EXPECT_EQ(dprobe_test_probed(), 0x12345679);

  // And again: disarmed probes arm anew.
  ASSERT_TRUE(registry.arm_all());
  EXPECT_EQ(code_at(probed(), kProbedBytes), armed);
  registry.disarm_all();
  registry.disarm_all();  // twice is harmless
  EXPECT_EQ(code_at(probed(), kProbedBytes), probed_original_);
}

TEST_F(ProbeRegistryTest, TwoHandlersAtOneAddressShareOneProbe) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 9), 3));
  ASSERT_TRUE(registry.add(site(probed(), 9), 11));
  EXPECT_EQ(registry.size(), 1u);
  ASSERT_TRUE(registry.arm_all());
  const Probe* probe = find(registry, probed() + 9);
  ASSERT_NE(probe, nullptr);
  EXPECT_THAT(probe->handlers, ElementsAre(3u, 11u));
  EXPECT_THAT(probe->original, ElementsAre(0x83));
  registry.disarm_all();
  EXPECT_EQ(code_at(probed(), kProbedBytes), probed_original_);
}

TEST_F(ProbeRegistryTest, ProbeWithoutAKnownFunctionIsDecodedWhereItIs) {
  ProbeRegistry registry = make_registry();
  auto added = registry.add({probed() + 9, probed() + 9, 0}, 0);
  ASSERT_TRUE(added) << added.error().message;
  ASSERT_TRUE(registry.arm_all());
  EXPECT_EQ(code_at(probed() + 9, 1), std::vector<uint8_t>{0xcc});
  registry.disarm_all();
}

TEST_F(ProbeRegistryTest, SlotRunsTheDisplacedInstructionAndJumpsBack) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 4), 0));
  ASSERT_TRUE(registry.arm_all());
  const Probe* probe = find(registry, probed() + 4);
  ASSERT_NE(probe, nullptr);
  // The slot: mov eax, 0x12345678 as it was, then a jump back to +9.
  EXPECT_EQ(code_at(probe->slot, 5),
            std::vector<uint8_t>(probed_original_.begin() + 4, probed_original_.begin() + 9));
  // As a hit resumes: the prologue ran, the slot runs the displaced
  // instruction, the rest of the function follows. The breakpoint is never run.
  EXPECT_EQ(dprobe_test_enter_at(probe->slot), 0x12345679);
  registry.disarm_all();
}

TEST_F(ProbeRegistryTest, SlotOfARipRelativeInstructionStillReachesItsTarget) {
  ProbeRegistry registry = make_registry();
  auto added = registry.add(site(rip_function(), 0, kRipBytes), 0);
  ASSERT_TRUE(added) << added.error().message;
  ASSERT_TRUE(registry.arm_all());
  const Probe* probe = find(registry, rip_function());
  ASSERT_NE(probe, nullptr);
  EXPECT_TRUE(probe->insn.cls.rip_relative);
  EXPECT_EQ(code_at(rip_function(), 1), std::vector<uint8_t>{0xcc});
  // lea rax, [rip-7] run from the slot still yields the function's address.
  EXPECT_EQ(dprobe_test_jump_to(probe->slot), rip_function());
  registry.disarm_all();
  ASSERT_EQ(code_at(rip_function(), kRipBytes), rip_original_);
  EXPECT_EQ(dprobe_test_rip(), rip_function());
}

TEST_F(ProbeRegistryTest, ProbeInsideAnInstructionFailsWithAListing) {
  ProbeRegistry registry = make_registry();
  auto added = registry.add(site(probed(), 5), 0);  // inside mov eax, imm32
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error().status, arch::ArmStatus::kNotBoundary);
  const std::string& message = added.error().message;
  EXPECT_THAT(message, HasSubstr("inside an instruction (EILSEQ)"));
  EXPECT_THAT(message, HasSubstr("mov eax, 0x12345678"));
  EXPECT_THAT(message, HasSubstr("<- probe at +0x1"));
  EXPECT_THAT(message, HasSubstr("\n> "));  // the listing marks the instruction
  EXPECT_EQ(registry.size(), 0u);
}

TEST_F(ProbeRegistryTest, EveryByteInsideAnInstructionIsRefused) {
  ProbeRegistry registry = make_registry();
  for (const uint64_t offset : {2u, 3u, 5u, 6u, 7u, 8u, 10u, 11u}) {
    auto added = registry.add(site(probed(), offset), 0);
    ASSERT_FALSE(added) << offset;
    EXPECT_EQ(added.error().status, arch::ArmStatus::kNotBoundary) << offset;
  }
  EXPECT_EQ(registry.size(), 0u);
}

TEST_F(ProbeRegistryTest, BreakpointAndUndefinedInstructionsAreRejected) {
  ProbeRegistry registry = make_registry();
  auto int3 = registry.add(site(traps(), 0, kTrapsBytes), 0);
  ASSERT_FALSE(int3);
  EXPECT_EQ(int3.error().status, arch::ArmStatus::kRejected);
  EXPECT_THAT(int3.error().message, HasSubstr("int3"));

  auto ud2 = registry.add(site(traps(), 1, kTrapsBytes), 0);
  ASSERT_FALSE(ud2);
  EXPECT_EQ(ud2.error().status, arch::ArmStatus::kRejected);
  EXPECT_THAT(ud2.error().message, HasSubstr("ud2"));
  EXPECT_EQ(registry.size(), 0u);
}

TEST_F(ProbeRegistryTest, BlacklistedRangesAreRefusedWithTheReason) {
  ProbeRegistry registry = make_registry();
  registry.blacklist(probed() + 1, probed() + 9, "the agent itself");
  registry.blacklist(rip_function(), rip_function() + kRipBytes, "signal return trampoline");

  for (const uint64_t offset : {1u, 4u}) {
    auto added = registry.add(site(probed(), offset), 0);
    ASSERT_FALSE(added) << offset;
    EXPECT_EQ(added.error().status, arch::ArmStatus::kBlacklisted);
    EXPECT_EQ(added.error().message, "the agent itself");
  }
  // Even a byte inside an instruction says blacklisted first.
  auto inside = registry.add(site(probed(), 5), 0);
  ASSERT_FALSE(inside);
  EXPECT_EQ(inside.error().status, arch::ArmStatus::kBlacklisted);

  auto other = registry.add(site(rip_function(), 0, kRipBytes), 0);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().status, arch::ArmStatus::kBlacklisted);
  EXPECT_EQ(other.error().message, "signal return trampoline");

  // The range ends before its end address: +0 and +9 are free.
  EXPECT_TRUE(registry.add(site(probed(), 0), 0));
  EXPECT_TRUE(registry.add(site(probed(), 9), 0));
  EXPECT_EQ(registry.size(), 2u);
}

TEST_F(ProbeRegistryTest, UnmappedAddressIsNotMapped) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapping = mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  ASSERT_EQ(munmap(mapping, page), 0);
  const uint64_t address = reinterpret_cast<uintptr_t>(mapping);

  ProbeRegistry registry = make_registry();
  auto added = registry.add({address, address, 16}, 0);
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error().status, arch::ArmStatus::kNotMapped);
  EXPECT_THAT(added.error().message, HasSubstr("not readable code"));
}

TEST_F(ProbeRegistryTest, FailedAddLeavesNothingArmed) {
  ProbeRegistry registry = make_registry();
  ASSERT_FALSE(registry.add(site(probed(), 5), 0));
  ASSERT_FALSE(registry.add(site(traps(), 0, kTrapsBytes), 1));
  EXPECT_EQ(registry.size(), 0u);
  ASSERT_TRUE(registry.arm_all());
  ASSERT_EQ(code_at(probed(), kProbedBytes), probed_original_);
  EXPECT_EQ(code_at(traps(), kTrapsBytes), traps_original_);
  EXPECT_EQ(find(registry, probed() + 5), nullptr);
  EXPECT_EQ(find(registry, traps()), nullptr);
  EXPECT_EQ(dprobe_test_probed(), 0x12345679);
}

TEST_F(ProbeRegistryTest, FailedAddsAmongGoodOnesArmOnlyTheGoodOnes) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 0), 0));
  ASSERT_FALSE(registry.add(site(probed(), 6), 1));
  ASSERT_FALSE(registry.add(site(traps(), 1, kTrapsBytes), 2));
  ASSERT_TRUE(registry.add(site(probed(), 13), 3));
  EXPECT_EQ(registry.size(), 2u);
  ASSERT_TRUE(registry.arm_all());
  std::vector<uint8_t> expected = probed_original_;
  expected[0] = 0xcc;
  expected[13] = 0xcc;
  EXPECT_EQ(code_at(probed(), kProbedBytes), expected);
  EXPECT_EQ(code_at(traps(), kTrapsBytes), traps_original_);
  EXPECT_EQ(find(registry, probed() + 6), nullptr);
  registry.disarm_all();
  EXPECT_EQ(code_at(probed(), kProbedBytes), probed_original_);
}

TEST_F(ProbeRegistryTest, DisarmedProbesStayFindable) {
  // A thread that trapped just before the byte came back must still find
  // its probe and resume through the slot.
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 9), 0));
  ASSERT_TRUE(registry.arm_all());
  registry.disarm_all();
  const Probe* probe = find(registry, probed() + 9);
  ASSERT_NE(probe, nullptr);
  EXPECT_FALSE(probe->armed);
  EXPECT_NE(probe->slot, 0u);
}

// ---- Probes that come and go while others are armed -------------------------

TEST_F(ProbeRegistryTest, AProbeAddedToALiveRegistryIsArmedAtOnce) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 0), 1));
  ASSERT_TRUE(registry.arm_all());
  ASSERT_TRUE(registry.add(site(probed(), 4), 2));
  std::vector<uint8_t> expected = probed_original_;
  expected[0] = 0xcc;
  expected[4] = 0xcc;
  EXPECT_EQ(code_at(probed(), kProbedBytes), expected);
  registry.disarm_all();
  EXPECT_EQ(code_at(probed(), kProbedBytes), probed_original_);
}

TEST_F(ProbeRegistryTest, AHandlerAddedLaterReplacesTheProbeButKeepsItsIdAndSlot) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 4), 1));
  ASSERT_TRUE(registry.arm_all());
  const Probe* before = find(registry, probed() + 4);
  const uint32_t id = before->id;
  const uint64_t slot = before->slot;
  ASSERT_TRUE(registry.add(site(probed(), 4), 2));
  const Probe* after = find(registry, probed() + 4);
  ASSERT_NE(after, nullptr);
  EXPECT_THAT(after->handlers, ElementsAre(1u, 2u));
  EXPECT_EQ(after->id, id);
  EXPECT_EQ(after->slot, slot);
  EXPECT_TRUE(after->armed);
  EXPECT_EQ(find_by_id(registry, id), after);
  // A fault in the slot names the probe it belongs to.
  EXPECT_EQ(find_by_slot(registry, slot + 2), after);
  EXPECT_EQ(find_by_slot(registry, probed()), nullptr);
  registry.disarm_all();
}

TEST_F(ProbeRegistryTest, DisarmAndArmARange) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 0), 1));
  ASSERT_TRUE(registry.add(site(rip_function(), 0, kRipBytes), 2));
  ASSERT_TRUE(registry.arm_all());
  registry.disarm_range(probed(), probed() + kProbedBytes);
  EXPECT_EQ(code_at(probed(), kProbedBytes), probed_original_);
  EXPECT_EQ(code_at(rip_function(), 1), std::vector<uint8_t>{0xcc});
  registry.arm_range(probed(), probed() + kProbedBytes);
  EXPECT_EQ(code_at(probed(), 1), std::vector<uint8_t>{0xcc});
  registry.disarm_all();
}

TEST_F(ProbeRegistryTest, RemovedProbesAreForgottenAndTheirSlotComesBack) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 4), 1));
  ASSERT_TRUE(registry.arm_all());
  const uint32_t old_id = find(registry, probed() + 4)->id;
  const uint64_t old_slot = find(registry, probed() + 4)->slot;
  // As when a library is unloaded: the bytes first, then the probes.
  registry.disarm_range(probed(), probed() + kProbedBytes);
  registry.remove_range(probed(), probed() + kProbedBytes);
  EXPECT_EQ(registry.size(), 0u);
  EXPECT_EQ(find(registry, probed() + 4), nullptr);
  EXPECT_EQ(find_by_id(registry, old_id), nullptr);
  // Loaded again at the same place: a new probe, the same slot.
  ASSERT_TRUE(registry.add(site(probed(), 4), 1));
  const Probe* again = find(registry, probed() + 4);
  ASSERT_NE(again, nullptr);
  EXPECT_NE(again->id, old_id);
  EXPECT_EQ(again->slot, old_slot);
  EXPECT_TRUE(again->armed);
  registry.disarm_all();
}

void count_hit(const arch::SavedRegs&) {}

TEST_F(ProbeRegistryTest, InternalProbesCarryTheirHandler) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add_internal(site(probed(), 0), count_hit));
  ASSERT_TRUE(registry.arm_all());
  const Probe* probe = find(registry, probed());
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->internal, &count_hit);
  EXPECT_TRUE(probe->handlers.empty());
  registry.disarm_all();
}

TEST_F(ProbeRegistryTest, WhatAReaderHoldsOutlivesItsRemoval) {
  ProbeRegistry registry = make_registry();
  ASSERT_TRUE(registry.add(site(probed(), 4), 9));
  ASSERT_TRUE(registry.arm_all());
  registry.disarm_all();
  {
    ProbeRegistry::Reader reader(registry);
    const Probe* held = reader.find(probed() + 4);
    ASSERT_NE(held, nullptr);
    registry.remove_range(probed(), probed() + kProbedBytes);
    for (int i = 0; i < 4; ++i) registry.reclaim();
    // Still readable: the reader that found it has not left.
    EXPECT_EQ(held->address, probed() + 4);
    EXPECT_THAT(held->handlers, ElementsAre(9u));
  }
  registry.reclaim();
  registry.reclaim();
}

}  // namespace
}  // namespace dprobe::core
