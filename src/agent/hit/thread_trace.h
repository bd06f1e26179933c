// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the agent keeps per traced thread: its ring (a slot of the shared
// trace memory, taken on the thread's first hit and given back once it has
// exited), its name for $comm, and the recursion guard that turns away a hit
// inside a handler, as the kernel's kprobe_running() does.
//
//   ThreadTrace& t = current_thread();
//   if (t.in_handler) { count a miss; } else { ensure_ring(t, memory); t.writer().reserve(n); }
#ifndef DPROBE_AGENT_THREAD_TRACE_H_
#define DPROBE_AGENT_THREAD_TRACE_H_

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <new>

#include "trace/hit/ring_buffer.h"
#include "trace/trace_memory.h"

namespace dprobe::agent {

struct ThreadTrace {
  bool has_ring;
  bool in_handler;
  bool is_agent;  // one of the agent's own threads: never traced
  bool in_agent;  // doing the agent's work (the loader hook): not traced
  bool named;     // comm read (learn_identity)
  uint32_t slot;
  uint32_t pid;
  uint32_t tid;
  uint32_t name_generation;  // of the name in comm
  uint32_t return_top;       // newest live return instance + 1; 0: none
  uint32_t return_depth;     // live return instances
  uint32_t zombie_top;       // dropped instances not yet freed + 1; 0: none
  uint32_t spare_count;      // freed instances kept for the next calls
  uint32_t spare[8];
  uint32_t session;           // of the trace memory its ring is in
  uint32_t takeover_session;  // the session it last looked for an exited thread's ring in
  uint32_t alt_generation;    // of the signal stack below; 0: not known yet
  uint64_t alt_begin;         // the thread's signal stack, for return probes
  uint64_t alt_end;
  uint64_t float_retval;  // the return being traced: its xmm0 / d0 (FetchEnv::float_retval)
  char comm[16];
  alignas(trace::RingWriter) unsigned char writer_storage[sizeof(trace::RingWriter)];

  trace::RingWriter& writer() {
    return *std::launder(reinterpret_cast<trace::RingWriter*>(writer_storage));
  }
};

// Counts a hit of event `id`: in the thread's ring where it can (no cache
// line shared with other threads), in the shared counter otherwise.
inline void count_hit(ThreadTrace& thread, trace::EventCounter& shared, uint32_t id) noexcept {
  if (thread.has_ring && thread.writer().count_hit(id)) [[likely]]
    return;
  shared.hits.fetch_add(1, std::memory_order_relaxed);
}

// Counts a hit of event `id` its filter turned away, as count_hit does.
inline void count_filtered(ThreadTrace& thread, trace::EventCounter& shared, uint32_t id) noexcept {
  if (thread.has_ring && thread.writer().count_filtered(id)) [[likely]]
    return;
  shared.filtered.fetch_add(1, std::memory_order_relaxed);
}

namespace detail {
// initial-exec: a plain %fs-relative access, safe in a signal handler, with
// no lazy allocation behind it; constinit: no initializer to call first.
extern constinit __attribute__((tls_model("initial-exec"))) thread_local ThreadTrace t_trace;
// Bumped by a rename (every thread reads its name again) and by a new
// session (every thread takes a ring in its trace memory).
inline constinit std::atomic<uint32_t> g_name_generation{0};
inline constinit std::atomic<uint32_t> g_session{0};
void refresh_ring(ThreadTrace& thread, const trace::TraceMemory& memory) noexcept;
}  // namespace detail

// The calling thread's state, zero until its first hit.
inline ThreadTrace& current_thread() { return detail::t_trace; }

// Gives the thread a ring if it has none yet: on its first hit it learns
// who it is (the only system calls a hit makes, once per thread), and any
// hit retries when every slot was taken. Inline: a hit with its ring, in
// the current session, under the current name, is two loads.
inline void ensure_ring(ThreadTrace& thread, const trace::TraceMemory& memory) noexcept {
  if (thread.has_ring && thread.session == detail::g_session.load(std::memory_order_acquire) &&
      thread.name_generation == detail::g_name_generation.load(std::memory_order_relaxed))
      [[likely]] {
    return;
  }
  detail::refresh_ring(thread, memory);
}

// The agent's work on a thread of the program (start-up, arming, the
// loader's notifications, resolving an IFUNC, its interposers' own
// calls): for the scope, no probe hit, return or system call of the
// thread is the program's, and none is counted. Nests.
class AgentWork {
 public:
  AgentWork() noexcept : thread_(current_thread()), was_in_agent_(thread_.in_agent) {
    thread_.in_agent = true;
  }
  ~AgentWork() { thread_.in_agent = was_in_agent_; }
  AgentWork(const AgentWork&) = delete;
  AgentWork& operator=(const AgentWork&) = delete;

 private:
  ThreadTrace& thread_;
  bool was_in_agent_;
};

// Called once at start-up, outside any handler.
void init_thread_traces();

// Gives back the rings of threads that have exited while rings are
// plentiful (once they are scarce, a new thread takes an exited thread's
// ring over itself, at its first hit), and drops their live return
// instances. Called now and then by the agent's own thread: a hit
// registers nothing with the C library (pthread_setspecific may allocate),
// and a thread may exit with signals blocked, past any hook of ours. The
// thread's static TLS, ThreadTrace included, starts zeroed in a new thread
// even where the C library reuses a cached stack. Returns whether rings
// were scarce (more than three in four taken, by live threads or not):
// then the caller comes back sooner for the return instances.
bool retire_exited_threads() noexcept;
// The same at the program's exit (exit_hold.cc), threads in their exit
// counted as gone; nothing when the program is sandboxed.
void retire_threads_at_exit() noexcept;
// Whether the program put itself in a seccomp sandbox (the agent then asks
// the kernel as little as it can).
bool sandboxed() noexcept;

// Whether thread `tid` of this process has begun its exit in the kernel
// (PF_EXITING in /proc/self/task/TID/stat): it runs no more code of the
// program, though a signal 0 still finds it until it is reaped. kUnknown
// when the file cannot be read, or the program's opens kept the agent from
// opening it (descriptor_gate.h).
enum class ThreadExit { kRunning, kExiting, kUnknown };
ThreadExit thread_exiting(uint32_t tid) noexcept;

// Some thread was renamed: every thread reads its name again at its next
// hit (a system call, only after a rename).
void thread_renamed();

// The calling thread's signal stack [begin, end) (both 0: none), asked of
// the kernel once, and again after some thread changed its own.
void signal_stack_of(ThreadTrace& thread, uint64_t& begin, uint64_t& end) noexcept;
void signal_stack_changed();

// The calling thread's id, asked of the kernel once (of the C library's
// thread descriptor once the program is sandboxed).
uint32_t current_thread_id() noexcept;

// The calling thread has just changed its own signal stack to `stack`.
void note_own_signal_stack(const stack_t& stack) noexcept;

// The program is about to install a seccomp filter on the calling thread
// (and maybe on every thread): that thread learns who it is now, and from
// now on no hit asks the kernel anything (thread_trace.cc).
void before_sandbox() noexcept;

// In a forked child: the forking thread is a new thread of a new process,
// with no ring yet.
void thread_forked();

// A new session's trace memory is in place: every thread takes a ring in it
// at its next hit.
void begin_trace_session();

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_THREAD_TRACE_H_
