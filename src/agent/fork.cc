// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/fork.h"

#include <pthread.h>

#include "agent/agent.h"
#include "agent/agent_state.h"
#include "agent/controller.h"
#include "agent/hit/return_probes.h"
#include "agent/hit/thread_trace.h"
#include "agent/own_heap.h"
#include "agent/syscall_dispatch.h"
#include "arch/runtime/raw_syscall.h"

namespace dprobe::agent {
namespace {

// No probe is half-written when the address space is copied.
void before_fork() {
  const AgentWork work;
  agent_state().registry_writer.lock();
  own_heap::lock_for_fork();
}

void in_parent() {
  const AgentWork work;
  own_heap::unlock_after_fork();
  agent_state().registry_writer.unlock();
}

void in_child() {
  const AgentWork work;           // a followed child's new session is the agent's work
  own_heap::unlock_after_fork();  // first: no other thread came along to hold it
  arch::note_own_pid();           // then: what follows may ask it
  AgentState& state = agent_state();
  state.recording.store(false);
  dispatch_after_fork(false);      // a followed child turns it on again when its session starts
  state.registry_writer.unlock();  // taken by this very thread before the fork
  Controller::forget_after_fork();
  thread_forked();
  return_probes_after_fork();
  if (!state.registry) return;  // never had a session: nothing is armed
  state.registry->forked();
  state.registry->use_process_barrier();
  // Without a descriptor of its own the child cannot touch its text: its
  // probes stay, recording nothing, and still resume correctly.
  if (!state.registry->reopen_text_patcher()) return;
  disarm_everything();
  if (follow_children()) start_session();  // the probes again, in rings of its own
}

}  // namespace

void install_fork_handlers() { ::pthread_atfork(before_fork, in_parent, in_child); }

}  // namespace dprobe::agent
