// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A probe is changed by copying it (ProbeRegistry replaces a probe trap
// handlers may be reading): the copy has every field of the original, its
// flags as they were at the copy, and is a probe of its own after.
#include "core/probe.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <type_traits>

namespace dprobe::core {
namespace {

// Copied on purpose only: `Probe copy = probe;` does not compile.
static_assert(std::is_constructible_v<Probe, const Probe&>);
static_assert(!std::is_convertible_v<const Probe&, Probe>);
static_assert(!std::is_copy_assignable_v<Probe>);

void internal_handler(const arch::SavedRegs&) {}

// Every field away from its default, so that one the copy missed shows.
void fill(Probe& probe) {
  // mov eax, 1; ret -- at 0x401000, probed at its first instruction.
  static constexpr std::array<uint8_t, 6> kCode = {0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};
  auto insn = arch::prepare_insn(kCode, 0x401000, 0x401000);
  ASSERT_TRUE(insn) << insn.error().message;
  probe.address = 0x401000;
  probe.id = 17;
  probe.insn = *insn;
  probe.slot = 0x7f0000001000;
  probe.original = {0xb8};
  probe.handlers = {3, 5};
  probe.internal = internal_handler;
  probe.armed.store(true);
  probe.function_address = 0x400ff0;
  probe.function_size = 0x40;
  probe.trampoline = 0x7f0000002000;
  probe.resume_copy = 0x7f0000002080;
  probe.displaced_length = 5;
  probe.displaced = {0xb8, 0x01, 0x00, 0x00, 0x00};
  probe.optimized.store(true);
  probe.breakpoint_reason = "a thread was inside";
  probe.optimize_again = true;
  probe.jump_only = true;
  probe.syscall_at = 0x401005;
}

TEST(Probe, ACopyHasEveryField) {
  Probe original;
  fill(original);
  const Probe copy(original);
  EXPECT_EQ(copy.address, original.address);
  EXPECT_EQ(copy.id, original.id);
  EXPECT_EQ(arch::insn_address(copy.insn), arch::insn_address(original.insn));
  EXPECT_EQ(arch::insn_bytes(copy.insn), arch::insn_bytes(original.insn));
  EXPECT_EQ(copy.slot, original.slot);
  EXPECT_EQ(copy.original, original.original);
  EXPECT_EQ(copy.handlers, original.handlers);
  EXPECT_EQ(copy.internal, original.internal);
  EXPECT_TRUE(copy.armed.load());
  EXPECT_EQ(copy.function_address, original.function_address);
  EXPECT_EQ(copy.function_size, original.function_size);
  EXPECT_EQ(copy.trampoline, original.trampoline);
  EXPECT_EQ(copy.resume_copy, original.resume_copy);
  EXPECT_EQ(copy.displaced_length, original.displaced_length);
  EXPECT_EQ(copy.displaced, original.displaced);
  EXPECT_TRUE(copy.optimized.load());
  EXPECT_EQ(copy.breakpoint_reason, original.breakpoint_reason);
  EXPECT_TRUE(copy.optimize_again);
  EXPECT_TRUE(copy.jump_only);
  EXPECT_EQ(copy.syscall_at, original.syscall_at);
}

TEST(Probe, ACopyTakesTheFlagsAsTheyAreAndKeepsItsOwn) {
  Probe original;
  original.armed.store(true);
  Probe copy(original);
  EXPECT_TRUE(copy.armed.load());
  EXPECT_FALSE(copy.optimized.load());
  original.armed.store(false);
  copy.optimized.store(true);
  EXPECT_TRUE(copy.armed.load());
  EXPECT_FALSE(original.optimized.load());
}

}  // namespace
}  // namespace dprobe::core
