// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the agent's parts under test (tests/CMakeLists.txt,
// dprobe_agent_parts) use of the agent's files that are not linked in:
// those need a session (agent.cc's state, the system call dispatch), and
// the interposers among them would take the test's own calls.
#include "unit/agent/link_seams.h"

#include <sys/mman.h>

#include "agent/hit/thread_trace.h"
#include "agent/hit/vdso.h"
#include "agent/signals.h"
#include "agent/syscall_dispatch.h"

namespace dprobe::agent {

// thread_trace.cc's: AgentWork (ifunc.cc) marks the calling thread here.
constinit thread_local ThreadTrace detail::t_trace{};

// syscall_dispatch.cc's: the restorer signal_table.cc gives SIGSYS. A
// stand-in the tests recognize; no SIGSYS is delivered through it.
void* dispatch_restorer() noexcept { return test::dispatch_restorer_stand_in(); }

// signals.cc's: the restorer unsafe_code.cc blacklists.
uint64_t signal_restorer_address() { return test::signal_restorer_stand_in(); }

// vdso.cc's: unsafe_code.cc asks for the vDSO's sigreturn (arm64's only).
void* vdso_symbol(const char*) { return nullptr; }

namespace test {

void* dispatch_restorer_stand_in() noexcept {
  static char stand_in;
  return &stand_in;
}

uint64_t signal_restorer_stand_in() noexcept {
  // Code of no object: blacklisted as the restorer, and as nothing else.
  static const uint64_t page = [] {
    void* mapped = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return mapped == MAP_FAILED ? 0 : reinterpret_cast<uint64_t>(mapped);
  }();
  return page;
}

}  // namespace test
}  // namespace dprobe::agent
