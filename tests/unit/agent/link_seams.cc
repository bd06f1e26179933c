// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the agent's parts under test (tests/CMakeLists.txt,
// dprobe_agent_parts) use of the agent's files that are not linked in:
// those need a session (agent.cc's state, the system call dispatch), and
// the interposers among them would take the test's own calls.
#include "unit/agent/link_seams.h"

#include "agent/syscall_dispatch.h"
#include "agent/thread_trace.h"

namespace dprobe::agent {

// thread_trace.cc's: AgentWork (ifunc.cc) marks the calling thread here.
constinit thread_local ThreadTrace detail::t_trace{};

// syscall_dispatch.cc's: the restorer signal_table.cc gives SIGSYS. A
// stand-in the tests recognize; no SIGSYS is delivered through it.
void* dispatch_restorer() noexcept { return test::dispatch_restorer_stand_in(); }

namespace test {

void* dispatch_restorer_stand_in() noexcept {
  static char stand_in;
  return &stand_in;
}

}  // namespace test
}  // namespace dprobe::agent
