// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach` can stop the program's threads with ptrace while the
// agent patches code (protocol::MessageType::kHoldThreads): a thread that
// reaches a breakpoint with every signal blocked (a thread's start or exit
// in the C library, a worker that blocks them all) would kill the process,
// and a stopped thread reaches none.
#ifndef DPROBE_AGENT_HELD_THREADS_H_
#define DPROBE_AGENT_HELD_THREADS_H_

namespace dprobe::agent {

// Asks the CLI on `socket` to hold every thread of the process but the
// caller, and waits for its answer: true if they are held, until the
// agent's next message (ArmReport, ReleaseThreads, Detached) lets them go.
// The caller holds whatever lock its other threads send under: no thread
// may be stopped half-way through a message. A message that comes
// meanwhile (a late answer to a loader's question) is dropped. Once the
// request is out, nothing allocates: a stopped thread may hold the
// allocator's lock.
bool ask_cli_to_hold_others(int socket);

// Whether the CLI of this session can hold threads (attach), as its
// Probes said.
void set_cli_holds_threads(bool can) noexcept;
bool cli_holds_threads() noexcept;

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_HELD_THREADS_H_
