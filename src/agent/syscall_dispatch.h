// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// System call tracing in the process, without ptrace: Syscall User
// Dispatch (prctl PR_SET_SYSCALL_USER_DISPATCH, Linux 5.11). On a thread
// that has it on, every system call made outside the agent's own text
// while the thread's selector byte says "block" comes back as SIGSYS
// before the kernel runs it. The agent's SIGSYS handler records the enter
// events of that call, makes the call itself (from its own text, which
// the kernel lets through), puts the result in the interrupted context,
// and records the exit events. The selector stays "block" for as long as
// the session traces: the agent's own system calls are made from its own
// text, never through the C library.
//
// Four calls cannot be made from the handler and are sent elsewhere:
// rt_sigreturn (the frame to return from is the interrupted program's: the
// thread is sent to the agent's own restorer, which makes the same call);
// clone, clone3, fork and vfork (the child would start in the handler's
// frame: the thread is sent to a clone gadget, syscall_gadgets_x86_64.S).
// rt_sigprocmask is made on the context's mask, which the handler's return
// restores, and never blocks the signals the agent holds.
//
// The dispatch is per thread and not inherited: the main thread turns it on
// at the start of the session, a new thread in its clone gadget, a followed
// child after fork. Calls through the vDSO are not system calls.
//
//   configure_syscall_tracing(events, summary);   // once the events are known
//   enable_dispatch_on_this_thread();             // on each thread
//   ... SIGSYS: dispatch_syscall(info, context);
#ifndef DPROBE_AGENT_SYSCALL_DISPATCH_H_
#define DPROBE_AGENT_SYSCALL_DISPATCH_H_

#include <signal.h>
#include <ucontext.h>

#include <cstdint>
#include <span>
#include <vector>

namespace dprobe::agent {

struct AgentEvent;

// What the kernel says when the dispatch cannot be had: 0 when it can.
// (Linux 5.11 or later, x86_64 here; arm64 kernels have it too, and the
// agent does not use it there yet.)
int syscall_dispatch_unavailable() noexcept;

// The session's system call events (already in the event table) and
// whether --summary counts every call. Call before any thread enables the
// dispatch; a later session replaces it.
// `rewrite_sites`: the syscall instructions that bring a SIGSYS are made
// into jumps to trampolines (syscall_sites.h), which see the call for a
// fraction of a signal's cost.
void configure_syscall_tracing(std::span<const AgentEvent* const> events, bool summary,
                               bool rewrite_sites);
bool syscall_tracing_configured() noexcept;

// Turns the dispatch on for the calling thread. False where the kernel
// refused it, or no session traces system calls.
bool enable_dispatch_on_this_thread() noexcept;

// Turns it on for every thread of the process (attach: the program's
// threads are running): the others are asked by a tagged SIGSEGV, as the
// thread census asks, and each turns it on in its handler. Waits for their
// answers (a second at most). The agent's own threads stay out.
void enable_dispatch_on_every_thread() noexcept;

// In the SIGSEGV handler: a request of enable_dispatch_on_every_thread,
// answered. False for any other signal.
bool answer_dispatch_request(int sig, const siginfo_t& info) noexcept;

// After fork, in the child: its one thread takes the dispatch on again
// (it is not inherited) when the child is traced.
void dispatch_after_fork(bool traced) noexcept;

// The session is over: each thread's next system call turns the dispatch
// off on that thread (one SIGSYS more each), and no site is rewritten.
void stop_syscall_tracing() noexcept;

// SIGSYS from the dispatch (SYS_USER_DISPATCH): the call made, recorded,
// or redirected. False for any other SIGSYS (a seccomp filter's). Not
// noexcept, and nothing on its way with a destructor: a thread cancelled
// (pthread_cancel) while the call it makes for the program waits unwinds
// through it with the process's unwinder, which must find no personality
// here (the agent's own copy of the C++ runtime, never set up, aborts).
bool dispatch_syscall(const siginfo_t& info, ucontext_t& context);

// SIGSYS from a seccomp filter (SYS_SECCOMP) at a system call of the
// agent's text. Made for the program by the dispatch: the program's own
// context, where its handler must run (`info` then says the program's call
// site). The agent's own: made to fail with ENOSYS, and `context` itself
// returned, to be resumed at once. nullptr for any other: the program's.
ucontext_t* seccomp_trap_context(siginfo_t& info, const ucontext_t& context) noexcept;

// SIGTRAP at a clone gadget's int3: the call returned, in the parent or in
// the child. True when it was one.
bool clone_gadget_returned(ucontext_t& context) noexcept;

// The calling thread rewrites the sites (the agent's controller): a new
// one wakes it from its wait.
void set_site_rewriter() noexcept;

// Sites are not rewritten while the calling thread is borrowed by `dprobe
// attach` to start the agent: the pc it goes back to (at a syscall it will
// restart, maybe) is held by the CLI, out of any census's sight. The CLI
// says when the thread runs the program again (MessageType::kResumed).
void hold_site_rewrites_while_borrowed() noexcept;
void release_site_rewrites() noexcept;
bool site_rewrites_held() noexcept;

// The syscall instructions seen for the first time since the last call
// (each site once in the process's life), for syscall_sites.h to rewrite.
std::vector<uint64_t> take_queued_sites();

// The restorer of the SIGSYS handler: rt_sigreturn from the agent's text.
void* dispatch_restorer() noexcept;

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_SYSCALL_DISPATCH_H_
