// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Errors the agent reports when it cannot arm a probe: each status has its
// code, the caret under the probe point of the definition, and the agent's
// reason (and listing) below it.
#include "cli/plan/arm_errors.h"

#include <gtest/gtest.h>

#include "lang/definition.h"

namespace dprobe::cli {
namespace {

lang::DefinitionSite site_of(const std::string& line) {
  auto def = lang::parse_definition(line);
  EXPECT_TRUE(def);
  return {def->command, "probes.txt:4", def->target_column, def->symbol_column, def->arg_columns};
}

struct StatusCase {
  arch::ArmStatus status;
  lang::ErrorCode code;
};

TEST(ArmErrors, EveryStatusHasItsCodeAndTheCaretUnderTheProbePoint) {
  const StatusCase cases[] = {
      {arch::ArmStatus::kNotBoundary, lang::ErrorCode::BAD_INSN_BNDRY},
      {arch::ArmStatus::kRejected, lang::ErrorCode::BAD_INSN},
      {arch::ArmStatus::kBlacklisted, lang::ErrorCode::BLACKLISTED},
      {arch::ArmStatus::kNoSlot, lang::ErrorCode::NO_OOL_SLOT},
      {arch::ArmStatus::kNotMapped, lang::ErrorCode::NOT_TEXT_ADDR},
      {arch::ArmStatus::kPatchFailed, lang::ErrorCode::FAIL_REG_PROBE},
  };
  const lang::DefinitionSite site = site_of("p:g/ev libfoo.so.1:func+4 x=%di");
  for (const StatusCase& c : cases) {
    const lang::ProbeError error = arm_error({7, c.status, "why"}, site);
    EXPECT_EQ(error.code, c.code);
    EXPECT_EQ(error.column, 19u);  // under "func", after "libfoo.so.1:"
    EXPECT_EQ(error.detail, "why");
    EXPECT_EQ(error.origin, "probes.txt:4");
  }
}

TEST(ArmErrors, TheListingGoesBelowTheReason) {
  const lang::DefinitionSite site = site_of("p:t/add add+1 a=%di");
  const lang::ProbeError error =
      arm_error({1, arch::ArmStatus::kNotBoundary,
                 "the address is inside an instruction (EILSEQ):\n"
                 "  > 0x1000: 8d 04 37             lea eax, [rdi+rsi*1]  <- probe at +0x1\n"
                 "    0x1003: c3                   ret"},
                site);
  EXPECT_EQ(lang::render_error(error),
            "dprobe: error: Probe point is not an instruction boundary (BAD_INSN_BNDRY) at "
            "probes.txt:4\n"
            "  Command: p:t/add add+1 a=%di\n"
            "                   ^\n"
            "  the address is inside an instruction (EILSEQ):\n"
            "      > 0x1000: 8d 04 37             lea eax, [rdi+rsi*1]  <- probe at +0x1\n"
            "        0x1003: c3                   ret\n");
}

// A set with one probe written on its own and the functions of a wildcard,
// as the target resolver expands it.
lang::DefinitionSet set_with_wildcard() {
  lang::DefinitionSet set;
  auto single = lang::parse_definition("p:g/one libc.so.6:malloc");
  EXPECT_TRUE(single);
  EXPECT_TRUE(set.apply(std::move(*single)));
  for (const char* function : {"clone", "dup2", "memcpy", "strlen", "puts"}) {
    auto each = lang::parse_definition("p libc.so.6:*");
    EXPECT_TRUE(each);
    each->wildcard = false;
    each->expanded = true;
    each->spec.point.target.symbol = function;
    each->spec.event.name = std::string("p_") + function + "_0";
    EXPECT_TRUE(set.apply(std::move(*each)));
  }
  return set;
}

TEST(RefusalReport, AWildcardsRefusedFunctionsAreOneSummaryNotErrors) {
  const lang::DefinitionSet set = set_with_wildcard();
  RefusalReport refusals(set);
  refusals.add({1, arch::ArmStatus::kArmed, {}});
  refusals.add({2, arch::ArmStatus::kBlacklisted, "signals blocked"});
  refusals.add({3, arch::ArmStatus::kBlacklisted, "signals blocked"});
  refusals.add({4, arch::ArmStatus::kRejected, "rip-relative"});
  refusals.add({5, arch::ArmStatus::kArmed, {}});
  EXPECT_FALSE(refusals.fatal());
  EXPECT_EQ(refusals.render(),
            "dprobe: p libc.so.6:*: 3 of 5 functions not probed:\n"
            "  1 Probe point is an instruction that can not be probed (BAD_INSN): memcpy\n"
            "  2 Probe point is on the blacklist (BLACKLISTED): clone, dup2\n");
}

TEST(RefusalReport, AProbeWrittenOnItsOwnIsAnErrorThatEndsTheSession) {
  const lang::DefinitionSet set = set_with_wildcard();
  RefusalReport refusals(set);
  refusals.add({1, arch::ArmStatus::kBlacklisted, "signals blocked"});
  EXPECT_TRUE(refusals.fatal());
  EXPECT_EQ(refusals.render(),
            "dprobe: error: Probe point is on the blacklist (BLACKLISTED)\n"
            "  Command: p:g/one libc.so.6:malloc\n"
            "                             ^\n"
            "  signals blocked\n");
}

TEST(RefusalReport, ManyFunctionsAreNamedUpToALimitThenCounted) {
  lang::DefinitionSet set;
  for (int i = 0; i < 9; ++i) {
    auto each = lang::parse_definition("p libm.so.6:f*");
    ASSERT_TRUE(each);
    each->expanded = true;
    each->spec.point.target.symbol = "f" + std::to_string(i);
    each->spec.event.name = "p_f" + std::to_string(i) + "_0";
    ASSERT_TRUE(set.apply(std::move(*each), "probes.txt:2"));
  }
  RefusalReport refusals(set);
  for (uint16_t id = 1; id <= 9; ++id) refusals.add({id, arch::ArmStatus::kNoSlot, {}});
  EXPECT_EQ(
      refusals.render(),
      "dprobe: probes.txt:2: p libm.so.6:f*: 9 of 9 functions not probed:\n"
      "  9 No out-of-line slot within reach of the probe point (NO_OOL_SLOT): f0, f1, f2, f3, f4, "
      "f5 and 3 more\n");
}

TEST(RefusalReport, EventsOfOtherSessionsAreIgnored) {
  const lang::DefinitionSet set = set_with_wildcard();
  RefusalReport refusals(set);
  refusals.add({99, arch::ArmStatus::kRejected, {}});
  EXPECT_FALSE(refusals.fatal());
  EXPECT_EQ(refusals.render(), "");
}

}  // namespace
}  // namespace dprobe::cli
