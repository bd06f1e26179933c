// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Errors the agent reports when it cannot arm a probe: each status has its
// code, the caret under the probe point of the definition, and the agent's
// reason (and listing) below it.
#include "cli/arm_errors.h"

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
  protocol::ArmStatus status;
  lang::ErrorCode code;
};

TEST(ArmErrors, EveryStatusHasItsCodeAndTheCaretUnderTheProbePoint) {
  const StatusCase cases[] = {
      {protocol::ArmStatus::kNotBoundary, lang::ErrorCode::BAD_INSN_BNDRY},
      {protocol::ArmStatus::kRejected, lang::ErrorCode::BAD_INSN},
      {protocol::ArmStatus::kBlacklisted, lang::ErrorCode::BLACKLISTED},
      {protocol::ArmStatus::kNoSlot, lang::ErrorCode::NO_OOL_SLOT},
      {protocol::ArmStatus::kNotMapped, lang::ErrorCode::NOT_TEXT_ADDR},
      {protocol::ArmStatus::kPatchFailed, lang::ErrorCode::FAIL_REG_PROBE},
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
      arm_error({1, protocol::ArmStatus::kNotBoundary,
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

}  // namespace
}  // namespace dprobe::cli
