// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/thread_trace.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/return_probes.h"

namespace dprobe::agent {
namespace {

// initial-exec: a plain %fs-relative access, safe in a signal handler, with
// no lazy allocation behind it.
__attribute__((tls_model("initial-exec"))) thread_local ThreadTrace t_trace;

pthread_key_t g_exit_key;
std::atomic<uint32_t> g_name_generation{0};
std::atomic<uint32_t> g_session{0};
const trace::TraceMemory* g_memory = nullptr;

void retire_slot(void*) {
  ThreadTrace& t = t_trace;
  drop_thread_instances(t);
  if (!t.has_ring || g_memory == nullptr || t.session != g_session.load()) return;
  t.has_ring = false;
  g_memory->slot(t.slot).state.store(trace::kSlotRetired, std::memory_order_release);
}

bool claim_slot(const trace::TraceMemory& memory, ThreadTrace& t) {
  for (uint32_t i = 0; i < memory.slot_count(); ++i) {
    trace::SlotState& slot = memory.slot(i);
    uint32_t expected = trace::kSlotFree;
    if (!slot.state.compare_exchange_strong(expected, trace::kSlotClaiming,
                                            std::memory_order_acquire)) {
      continue;
    }
    auto ring =
        trace::RingBuffer::initialize(memory.ring(i), memory.ring_bytes(), t.pid, t.tid, t.comm);
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

// The thread's name, straight from the kernel: prctl itself is interposed.
void read_name(ThreadTrace& t) {
  t.name_generation = g_name_generation.load(std::memory_order_acquire);
  char name[16] = {};
  ::syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);
  __builtin_memcpy(t.comm, name, sizeof(name));
}

// Who the thread is: the only system calls a hit makes, once per thread.
void learn_identity(ThreadTrace& t) {
  t.pid = static_cast<uint32_t>(::getpid());
  t.tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  read_name(t);
}

// Lines after this point of the ring carry the new name; those before keep
// the old one. A name record that finds the ring full is lost, not counted:
// only the name of the lines is then stale.
void publish_name(ThreadTrace& t) {
  void* record = t.writer().reserve(trace::kCommRecordSize);
  if (record == nullptr) return;
  const trace::RecordHeader header{trace::kCommRecordType, 0, 0, t.pid, t.tid, 0};
  __builtin_memcpy(record, &header, sizeof(header));
  __builtin_memcpy(static_cast<char*>(record) + sizeof(header), t.comm, sizeof(t.comm));
  t.writer().commit();
}

}  // namespace

void init_thread_traces() { ::pthread_key_create(&g_exit_key, retire_slot); }

ThreadTrace& current_thread() { return t_trace; }

void thread_renamed() { g_name_generation.fetch_add(1, std::memory_order_release); }

void thread_forked() {
  t_trace.has_ring = false;
  t_trace.pid = 0;
  t_trace.tid = 0;
}

void begin_trace_session() { g_session.fetch_add(1, std::memory_order_release); }

void ensure_ring(ThreadTrace& t, const trace::TraceMemory& memory) noexcept {
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
  g_memory = &memory;
  if (t.tid == 0) {
    learn_identity(t);
    // The exit hook runs for threads with a non-null value: it gives the
    // ring back and drops the thread's live return instances.
    ::pthread_setspecific(g_exit_key, &t);
  }
  t.has_ring = claim_slot(memory, t);
}

}  // namespace dprobe::agent
