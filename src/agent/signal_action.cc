// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/signal_action.h"

#include <signal.h>

namespace dprobe::agent {
namespace {

Decision take_default(int sig, bool reset) {
  Decision decision;
  decision.reset_to_default = reset;
  decision.outcome =
      default_action(sig) == DefaultAction::kIgnore ? Outcome::kIgnore : Outcome::kTakeDefault;
  return decision;
}

Decision call_handler(const ProgramAction& action, const Delivery& delivery) {
  Decision decision;
  decision.outcome = Outcome::kCallHandler;
  decision.siginfo = (action.flags & SA_SIGINFO) != 0;
  decision.reset_to_default = (action.flags & SA_RESETHAND) != 0;
  SignalMask mask = delivery.blocked | action.mask;
  if ((action.flags & SA_NODEFER) == 0) mask |= signal_bit(delivery.sig);
  decision.handler_mask = mask & ~kUnblockable;
  return decision;
}

}  // namespace

DefaultAction default_action(int sig) {
  switch (sig) {
    case SIGCHLD:
    case SIGURG:
    case SIGWINCH:
      return DefaultAction::kIgnore;
    case SIGCONT:
      return DefaultAction::kContinue;
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return DefaultAction::kStop;
    case SIGQUIT:
    case SIGILL:
    case SIGTRAP:
    case SIGABRT:
    case SIGBUS:
    case SIGFPE:
    case SIGSEGV:
    case SIGXCPU:
    case SIGXFSZ:
    case SIGSYS:
      return DefaultAction::kCore;
    default:
      return DefaultAction::kTerminate;
  }
}

Decision decide(const ProgramAction& action, const Delivery& delivery) {
  const bool blocked = (delivery.blocked & signal_bit(delivery.sig)) != 0;
  if (delivery.origin == Origin::kForced) {
    // A fault or trap the program ignores or blocks would repeat forever:
    // the kernel makes the action SIG_DFL (and unblocks it).
    if (blocked || action.disposition == Disposition::kIgnore) {
      return take_default(delivery.sig, true);
    }
  } else if (blocked) {
    // A blocked signal is never ignored: its action may change before it
    // is unblocked.
    Decision decision;
    decision.outcome = Outcome::kLeavePending;
    return decision;
  }
  switch (action.disposition) {
    case Disposition::kIgnore:
      return Decision{};
    case Disposition::kDefault:
      return take_default(delivery.sig, false);
    case Disposition::kHandler:
      break;
  }
  return call_handler(action, delivery);
}

}  // namespace dprobe::agent
