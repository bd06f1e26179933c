// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Placing the probes the CLI sends: each event is kept (once, by id), each
// probe added to the registry (armed at once when the registry is live),
// and the outcome of every one reported back.
#ifndef DPROBE_AGENT_ARMING_H_
#define DPROBE_AGENT_ARMING_H_

#include "protocol/messages.h"

namespace dprobe::agent {

// Takes the registry's writer lock. Probes that fail are left out; the
// report says why.
protocol::ArmReport add_probes(const protocol::Probes& probes);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_ARMING_H_
