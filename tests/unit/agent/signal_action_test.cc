// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// decide() against the kernel's rules, one row per case (kernel/signal.c:
// force_sig_info_to_task for faults and traps, sig_ignored and the pending
// sets for sent signals, signal_delivered for the handler's mask).
#include "agent/signal_action.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <ostream>
#include <string>
#include <vector>

namespace dprobe::agent {
namespace {

constexpr SignalMask kNone = 0;
constexpr SignalMask kTrap = signal_bit(SIGTRAP);
constexpr SignalMask kSegv = signal_bit(SIGSEGV);
constexpr SignalMask kBus = signal_bit(SIGBUS);
constexpr SignalMask kUsr1 = signal_bit(SIGUSR1);
constexpr SignalMask kUsr2 = signal_bit(SIGUSR2);

const ProgramAction kDfl{Disposition::kDefault, 0, 0};
const ProgramAction kIgn{Disposition::kIgnore, 0, 0};

ProgramAction handler(uint64_t flags, SignalMask mask = 0) {
  return {Disposition::kHandler, flags, mask};
}

struct Row {
  std::string name;
  ProgramAction action;
  Delivery delivery;
  Decision expected;
};

std::ostream& operator<<(std::ostream& os, const Row& row) { return os << row.name; }

Decision outcome(Outcome what, bool reset = false) {
  Decision decision;
  decision.outcome = what;
  decision.reset_to_default = reset;
  return decision;
}

Decision calls(SignalMask mask, bool siginfo, bool reset = false) {
  Decision decision;
  decision.outcome = Outcome::kCallHandler;
  decision.siginfo = siginfo;
  decision.reset_to_default = reset;
  decision.handler_mask = mask;
  return decision;
}

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      // Sent signals (kill, raise, tgkill, sigqueue).
      {"sent_ignored_segv_is_ignored",
       kIgn,
       {SIGSEGV, Origin::kSent, 0},
       outcome(Outcome::kIgnore)},
      {"sent_default_segv_dumps_core",
       kDfl,
       {SIGSEGV, Origin::kSent, 0},
       outcome(Outcome::kTakeDefault)},
      {"sent_default_bus_dumps_core",
       kDfl,
       {SIGBUS, Origin::kSent, 0},
       outcome(Outcome::kTakeDefault)},
      {"sent_default_trap_dumps_core",
       kDfl,
       {SIGTRAP, Origin::kSent, 0},
       outcome(Outcome::kTakeDefault)},
      {"sent_default_chld_is_ignored",
       kDfl,
       {SIGCHLD, Origin::kSent, 0},
       outcome(Outcome::kIgnore)},
      {"sent_blocked_stays_pending",
       handler(0),
       {SIGTRAP, Origin::kSent, kTrap},
       outcome(Outcome::kLeavePending)},
      {"sent_blocked_ignored_stays_pending",
       kIgn,
       {SIGSEGV, Origin::kSent, kSegv},
       outcome(Outcome::kLeavePending)},
      {"sent_blocked_default_stays_pending",
       kDfl,
       {SIGTRAP, Origin::kSent, kTrap},
       outcome(Outcome::kLeavePending)},
      {"sent_other_blocked_is_delivered",
       handler(SA_SIGINFO),
       {SIGSEGV, Origin::kSent, kUsr1},
       calls(kUsr1 | kSegv, true)},
      // Faults and traps of the instruction itself.
      {"fault_ignored_dies",
       kIgn,
       {SIGSEGV, Origin::kForced, 0},
       outcome(Outcome::kTakeDefault, true)},
      {"fault_default_dies", kDfl, {SIGSEGV, Origin::kForced, 0}, outcome(Outcome::kTakeDefault)},
      {"fault_blocked_handler_dies",
       handler(SA_SIGINFO),
       {SIGSEGV, Origin::kForced, kSegv},
       outcome(Outcome::kTakeDefault, true)},
      {"trap_blocked_handler_dies",
       handler(0),
       {SIGTRAP, Origin::kForced, kTrap},
       outcome(Outcome::kTakeDefault, true)},
      {"fault_bus_handler_runs",
       handler(SA_SIGINFO),
       {SIGBUS, Origin::kForced, 0},
       calls(kBus, true)},
      // The handler's mask and flags.
      {"plain_handler_blocks_itself", handler(0), {SIGSEGV, Origin::kSent, 0}, calls(kSegv, false)},
      {"nodefer_leaves_itself_open",
       handler(SA_NODEFER),
       {SIGSEGV, Origin::kSent, 0},
       calls(kNone, false)},
      {"sa_mask_is_added",
       handler(SA_SIGINFO, kUsr1 | kBus),
       {SIGSEGV, Origin::kForced, kUsr2},
       calls(kUsr1 | kUsr2 | kBus | kSegv, true)},
      {"nodefer_with_sa_mask",
       handler(SA_NODEFER, kUsr1),
       {SIGTRAP, Origin::kSent, kUsr2},
       calls(kUsr1 | kUsr2, false)},
      {"resethand_resets_first",
       handler(SA_RESETHAND | SA_SIGINFO),
       {SIGSEGV, Origin::kForced, 0},
       calls(kSegv, true, true)},
      {"resethand_nodefer",
       handler(SA_RESETHAND | SA_NODEFER),
       {SIGBUS, Origin::kSent, 0},
       calls(kNone, false, true)},
      {"onstack_and_restart_change_no_mask",
       handler(SA_ONSTACK | SA_RESTART),
       {SIGSEGV, Origin::kForced, 0},
       calls(kSegv, false)},
      {"kill_and_stop_never_masked",
       handler(0, signal_bit(SIGKILL) | signal_bit(SIGSTOP)),
       {SIGSEGV, Origin::kSent, signal_bit(SIGSTOP)},
       calls(kSegv, false)},
  };
  return table;
}

class Decide : public ::testing::TestWithParam<Row> {};

TEST_P(Decide, AsTheKernel) {
  const Row& row = GetParam();
  const Decision got = decide(row.action, row.delivery);
  EXPECT_EQ(got.outcome, row.expected.outcome);
  EXPECT_EQ(got.reset_to_default, row.expected.reset_to_default);
  if (row.expected.outcome == Outcome::kCallHandler) {
    EXPECT_EQ(got.siginfo, row.expected.siginfo);
    EXPECT_EQ(got.handler_mask, row.expected.handler_mask);
  }
}

INSTANTIATE_TEST_SUITE_P(Table, Decide, ::testing::ValuesIn(rows()),
                         [](const auto& info) { return info.param.name; });

TEST(DefaultAction, OfTheSignalsTheAgentHolds) {
  EXPECT_EQ(default_action(SIGTRAP), DefaultAction::kCore);
  EXPECT_EQ(default_action(SIGSEGV), DefaultAction::kCore);
  EXPECT_EQ(default_action(SIGBUS), DefaultAction::kCore);
  EXPECT_EQ(default_action(SIGTERM), DefaultAction::kTerminate);
  EXPECT_EQ(default_action(SIGTSTP), DefaultAction::kStop);
  EXPECT_EQ(default_action(SIGCONT), DefaultAction::kContinue);
  EXPECT_EQ(default_action(SIGWINCH), DefaultAction::kIgnore);
}

}  // namespace
}  // namespace dprobe::agent
