// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit/thread_trace.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>

#include "agent/agent_state.h"
#include "agent/hit/descriptor_gate.h"
#include "agent/hit/return_probes.h"
#include "arch/runtime/platform.h"
#include "arch/runtime/raw_syscall.h"
#include "base/hit_path.h"
#include "base/no_libc_calls.h"
#include "core/epoch.h"

namespace dprobe::agent {

constinit thread_local ThreadTrace detail::t_trace{};

namespace {

using detail::g_name_generation;
using detail::g_session;
using detail::t_trace;

std::atomic<uint32_t> g_signal_stack_generation{1};
// The process whose session the trace memory is (a forked child keeps its
// parent's until it starts its own, if ever).
std::atomic<uint32_t> g_session_pid{0};

// The thread's name as a view, measured here: strlen is the C library's,
// which may use vector registers.
DPROBE_HIT_PATH std::string_view comm_of(const ThreadTrace& t) {
  size_t length = 0;
  while (length < sizeof(t.comm) && t.comm[length] != '\0') ++length;
  return {t.comm, length};
}

DPROBE_HIT_PATH bool claim_slot(const trace::TraceMemory& memory, ThreadTrace& t) {
  for (uint32_t i = 0; i < memory.slot_count(); ++i) {
    trace::SlotState& slot = memory.slot(i);
    uint32_t expected = trace::kSlotFree;
    if (!slot.state.compare_exchange_strong(expected, trace::kSlotClaiming,
                                            std::memory_order_acquire)) {
      continue;
    }
    auto ring =
        trace::RingBuffer::create(memory.ring(i), memory.ring_bytes(), t.pid, t.tid, comm_of(t));
    if (!ring) {
      slot.state.store(trace::kSlotFree, std::memory_order_release);
      return false;
    }
    new (t.writer_storage) trace::RingWriter(*ring);
    t.slot = i;
    slot.generation.fetch_add(1, std::memory_order_relaxed);
    slot.state.store(trace::kSlotActive, std::memory_order_release);
    return true;
  }
  return false;
}

// Once a seccomp filter may hold the program's threads (the program asked
// for one through prctl or syscall, see before_sandbox()), a hit asks the
// kernel nothing: an allowlist sandbox kills a thread for gettid. A thread
// is then known by its C library's thread descriptor, and named as the
// thread that installed the filter was.
std::atomic<bool> g_sandboxed{false};
char g_sandbox_comm[16];
// Where glibc keeps a thread's id in its descriptor (struct pthread), as
// it tells debuggers (_thread_db_pthread_tid: bits, count, offset), and
// that descriptor's size; 0: not known (not glibc).
uint32_t g_tid_offset = 0;
uint32_t g_pthread_size = 0;

DPROBE_HIT_PATH void find_descriptor_tid() {
  const auto* tid = static_cast<const uint32_t*>(::dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid"));
  const auto* size =
      static_cast<const uint32_t*>(::dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread"));
  if (tid == nullptr || size == nullptr || tid[0] != 32 || tid[1] != 1) return;
  g_tid_offset = tid[2];
  g_pthread_size = size[0];
}

// The calling thread's id from its descriptor, or the kernel's answer where
// the descriptor's layout is not known.
DPROBE_HIT_PATH uint32_t descriptor_tid() noexcept {
  if (g_tid_offset == 0) return arch::raw_gettid();
  const char* descriptor = arch::thread_descriptor(arch::thread_pointer(), g_pthread_size);
  uint32_t tid = 0;
  __builtin_memcpy(&tid, descriptor + g_tid_offset, sizeof(tid));
  return tid;
}

// The thread's name, straight from the kernel: prctl itself is interposed,
// and every function of libc may carry a probe. Sandboxed: the name the
// sandbox began with.
DPROBE_HIT_PATH void read_name(ThreadTrace& t) {
  t.name_generation = g_name_generation.load(std::memory_order_acquire);
  char name[16] = {};
  if (g_sandboxed.load(std::memory_order_acquire)) {
    __builtin_memcpy(name, g_sandbox_comm, sizeof(name));
  } else {
    arch::raw_syscall(SYS_prctl, PR_GET_NAME, arch::raw_arg(name));
  }
  __builtin_memcpy(t.comm, name, sizeof(name));
}

DPROBE_HIT_PATH uint32_t thread_id(ThreadTrace& t) noexcept {
  if (t.tid == 0) {
    t.tid = g_sandboxed.load(std::memory_order_acquire) ? descriptor_tid() : arch::raw_gettid();
  }
  return t.tid;
}

// Who the thread is: the only system calls a hit makes (gettid and prctl),
// once per thread, and none once the program is sandboxed.
DPROBE_HIT_PATH void learn_identity(ThreadTrace& t) {
  t.pid = arch::own_pid();
  thread_id(t);
  read_name(t);
  t.named = true;
}

// Lines after this point of the ring carry the new name; those before keep
// the old one. A name record that finds the ring full is lost, not counted:
// only the name of the lines is then stale.
DPROBE_HIT_PATH void publish_name(ThreadTrace& t) {
  void* record = t.writer().reserve(trace::kCommRecordSize);
  if (record == nullptr) return;
  const trace::RecordHeader header{trace::kCommRecordType, 0, 0, t.pid, t.tid, 0};
  __builtin_memcpy(record, &header, sizeof(header));
  __builtin_memcpy(static_cast<char*>(record) + sizeof(header), t.comm, sizeof(t.comm));
  t.writer().commit();
}

// Holds an Active slot while deciding about its thread (kSlotChecking): the
// agent's sweep and a thread looking for a ring never decide about one
// slot at once, and neither retires a ring another has just taken over.
DPROBE_HIT_PATH bool hold_active(trace::SlotState& slot) {
  uint32_t active = trace::kSlotActive;
  return slot.state.compare_exchange_strong(active, trace::kSlotChecking,
                                            std::memory_order_acquire);
}

// Every ring taken and the agent's sweep not yet round: the ring of a
// thread that has exited goes on as this thread's, after the records it
// left, which the reader still reads (each record names its thread; the
// name record says who writes from here on). A program that starts thread
// after thread loses nothing to the sweep's pace. Costs one system call
// per ring looked at, once per thread and session; none in a sandbox.
DPROBE_HIT_PATH bool take_over_exited(const trace::TraceMemory& memory, ThreadTrace& t) {
  if (t.takeover_session == t.session || g_sandboxed.load(std::memory_order_acquire)) {
    return false;
  }
  t.takeover_session = t.session;
  for (uint32_t i = 0; i < memory.slot_count(); ++i) {
    trace::SlotState& slot = memory.slot(i);
    if (!hold_active(slot)) continue;
    auto* control = static_cast<trace::RingControl*>(memory.ring(i));
    const bool exited = control->tid == t.tid || !arch::raw_thread_alive(t.pid, control->tid);
    if (!exited) {
      slot.state.store(trace::kSlotActive, std::memory_order_release);
      continue;
    }
    auto ring = trace::RingBuffer::open(memory.ring(i), memory.ring_bytes());
    if (!ring) {
      slot.state.store(trace::kSlotActive, std::memory_order_release);
      continue;
    }
    control->pid = t.pid;
    control->tid = t.tid;
    new (t.writer_storage) trace::RingWriter(*ring);
    t.slot = i;
    slot.state.store(trace::kSlotActive, std::memory_order_release);
    publish_name(t);
    return true;
  }
  return false;
}

}  // namespace

// The process's id is noted outside any handler (here at start-up, and
// in a forked child): a hit asks the kernel nothing it can do without.
void init_thread_traces() {
  arch::note_own_pid();
  find_descriptor_tid();
  core::EpochDomain::set_thread_id_source(current_thread_id);
}

DPROBE_HIT_PATH uint32_t current_thread_id() noexcept { return thread_id(t_trace); }

void before_sandbox() noexcept {
  ThreadTrace& t = t_trace;
  if (!t.named) learn_identity(t);
  __builtin_memcpy(g_sandbox_comm, t.comm, sizeof(g_sandbox_comm));
  uint64_t begin = 0;
  uint64_t end = 0;
  signal_stack_of(t, begin, end);  // known before the kernel may refuse to say
  g_sandboxed.store(true, std::memory_order_release);
}

void thread_renamed() { g_name_generation.fetch_add(1, std::memory_order_release); }

void signal_stack_changed() { g_signal_stack_generation.fetch_add(1, std::memory_order_release); }

DPROBE_HIT_PATH void signal_stack_of(ThreadTrace& t, uint64_t& begin, uint64_t& end) noexcept {
  const uint32_t now = g_signal_stack_generation.load(std::memory_order_acquire);
  // Sandboxed, what the thread knew stays (its own sigaltstack calls still
  // tell it: note_own_signal_stack); a thread that knew nothing has none.
  if (t.alt_generation != now && g_sandboxed.load(std::memory_order_acquire)) {
    t.alt_generation = now;
  } else if (t.alt_generation != now) {
    stack_t ss{};
    const bool none = arch::raw_failed(arch::raw_syscall(SYS_sigaltstack, 0, arch::raw_arg(&ss))) ||
                      (ss.ss_flags & SS_DISABLE) != 0;
    t.alt_begin = none ? 0 : reinterpret_cast<uint64_t>(ss.ss_sp);
    t.alt_end = none ? 0 : t.alt_begin + ss.ss_size;
    t.alt_generation = now;
  }
  begin = t.alt_begin;
  end = t.alt_end;
}

void note_own_signal_stack(const stack_t& stack) noexcept {
  ThreadTrace& t = t_trace;
  const bool none = (stack.ss_flags & SS_DISABLE) != 0;
  t.alt_begin = none ? 0 : reinterpret_cast<uint64_t>(stack.ss_sp);
  t.alt_end = none ? 0 : t.alt_begin + stack.ss_size;
  t.alt_generation = g_signal_stack_generation.load(std::memory_order_acquire);
}

void thread_forked() {
  t_trace.has_ring = false;
  t_trace.named = false;
  t_trace.pid = 0;
  t_trace.tid = 0;
}

void begin_trace_session() {
  g_session_pid.store(arch::own_pid(), std::memory_order_relaxed);
  g_session.fetch_add(1, std::memory_order_release);
}

DPROBE_HIT_PATH void detail::refresh_ring(ThreadTrace& t,
                                          const trace::TraceMemory& memory) noexcept {
  const uint32_t session = g_session.load(std::memory_order_acquire);
  if (t.has_ring && t.session != session) t.has_ring = false;  // a ring of an earlier session
  t.session = session;
  if (t.has_ring) {
    if (t.name_generation != g_name_generation.load(std::memory_order_relaxed)) {
      read_name(t);
      publish_name(t);
    }
    return;
  }
  if (!t.named) learn_identity(t);
  t.has_ring = claim_slot(memory, t) || take_over_exited(memory, t);
}

namespace {
bool alive_here(uint32_t tid) noexcept { return arch::raw_thread_alive(arch::own_pid(), tid); }

// Returns how many rings were taken when it began, those it gave back too.
DPROBE_HIT_PATH uint32_t rings_taken(const trace::TraceMemory& memory) noexcept {
  uint32_t taken = 0;
  for (uint32_t i = 0; i < memory.slot_count(); ++i) {
    const uint32_t now = memory.slot(i).state.load(std::memory_order_acquire);
    taken += now == trace::kSlotActive || now == trace::kSlotChecking ? 1 : 0;
  }
  return taken;
}

// The rings of exited threads go to the reader, which drains and frees
// them, while rings are plentiful. Once more than three in four are taken
// they stay: a new thread takes one over at once (take_over_exited), where
// a retired one would wait for the reader's next pass. At exit, all go.
uint32_t retire_exited_threads(ExitedThreads which) noexcept {
  AgentState& state = agent_state();
  const uint32_t pid = arch::own_pid();
  // A forked child without a session of its own still sees its parent's
  // trace memory: the parent's threads are not its own, so it leaves
  // their rings and counters alone.
  if (g_session_pid.load(std::memory_order_relaxed) != pid) return 0;
  if (state.registry) state.registry->reap_readers(alive_here);
  const std::optional<trace::TraceMemory>& memory = state.memory;
  if (!memory) return 0;
  const uint32_t taken = rings_taken(*memory);
  const bool scarce = taken > memory->slot_count() / 4 * 3;
  for (uint32_t i = 0;
       (!scarce || which == ExitedThreads::kReapedOrExiting) && i < memory->slot_count(); ++i) {
    trace::SlotState& slot = memory->slot(i);
    if (!hold_active(slot)) continue;  // not in use, or another decides about it now
    const auto* control = static_cast<const trace::RingControl*>(memory->ring(i));
    const bool alive = arch::raw_thread_alive(pid, control->tid);
    slot.state.store(alive ? trace::kSlotActive : trace::kSlotRetired, std::memory_order_release);
  }
  drop_exited_instances(pid, which);
  return taken;
}
}  // namespace

bool retire_exited_threads() noexcept {
  const uint32_t taken = retire_exited_threads(ExitedThreads::kReaped);
  const std::optional<trace::TraceMemory>& memory = agent_state().memory;
  return memory && taken > memory->slot_count() / 4 * 3;
}

// At exit() (or when the agent is unloaded): threads that exited since the
// last pass are counted now, before the CLI reads the final profile. A
// thread the program joined just before may still be in the kernel's exit
// (the join returns when the kernel clears its id, before it is reaped):
// it counts as gone too.
void retire_threads_at_exit() noexcept {
  // Sandboxed, the exiting thread may not ask the kernel which threads live
  // (the agent's own thread, outside the filter unless it was synced to
  // every thread, passes now and then; the CLI reads every ring at the end).
  if (sandboxed()) return;
  const AgentWork work;
  retire_exited_threads(ExitedThreads::kReapedOrExiting);
}

bool sandboxed() noexcept { return g_sandboxed.load(std::memory_order_acquire); }

namespace {
// "/proc/self/task/TID/stat" into `path`. Plain loops: the agent calls no
// string function of the C library, which the user may be probing.
DPROBE_NO_LIBC_CALLS void task_stat_path(uint32_t tid, char (&path)[48]) noexcept {
  constexpr char kPrefix[] = "/proc/self/task/";
  constexpr char kSuffix[] = "/stat";
  char digits[10];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + tid % 10);
    tid /= 10;
  } while (tid != 0);
  size_t at = 0;
  for (size_t i = 0; kPrefix[i] != '\0'; ++i) path[at++] = kPrefix[i];
  while (count > 0) path[at++] = digits[--count];
  for (size_t i = 0; kSuffix[i] != '\0'; ++i) path[at++] = kSuffix[i];
  path[at] = '\0';
}

// The flags field of a stat line: the 7th after the name's closing ')'
// (state ppid pgrp session tty_nr tpgid flags); the name may hold both
// spaces and parentheses, so the last ')' ends it.
DPROBE_NO_LIBC_CALLS uint64_t stat_flags(const char* line, size_t size) noexcept {
  size_t at = size;
  while (at > 0 && line[at - 1] != ')') --at;
  if (at == 0) return 0;
  for (int spaces = 0; at < size && spaces < 7; ++at) {
    if (line[at] == ' ') ++spaces;
  }
  uint64_t flags = 0;
  for (; at < size && line[at] >= '0' && line[at] <= '9'; ++at) {
    flags = flags * 10 + static_cast<uint64_t>(line[at] - '0');
  }
  return flags;
}
}  // namespace

ThreadExit thread_exiting(uint32_t tid) noexcept {
  constexpr uint64_t kPfExiting = 0x4;  // include/linux/sched.h
  char path[48];
  task_stat_path(tid, path);
  char line[512];
  const long n = read_file_through_gate(path, line, sizeof(line));
  if (n <= 0) return ThreadExit::kUnknown;
  return (stat_flags(line, static_cast<size_t>(n)) & kPfExiting) != 0 ? ThreadExit::kExiting
                                                                      : ThreadExit::kRunning;
}

}  // namespace dprobe::agent
