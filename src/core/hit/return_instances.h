// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Live return-probe instances: one per probed call whose return address was
// hijacked, holding what the return needs (the real return address, where
// it was, the arguments fetched at entry, which events got the instance).
// Instances come from one pool shared by all threads (a lock-free stack of
// free indices) and are kept per thread as a linked stack, newest first:
// task-keyed, as the kernel's redesigned kretprobes keep them.
//
//   ReturnInstancePool pool(4096);
//   auto index = pool.acquire();            // nullopt: none free (a miss)
//   pool.at(*index).return_address = ra;
//   pool.release(*index);
#ifndef DPROBE_CORE_RETURN_INSTANCES_H_
#define DPROBE_CORE_RETURN_INSTANCES_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

namespace dprobe::core {

// $argN of a return probe is fetched at entry and kept: up to this N.
inline constexpr uint32_t kMaxEntryArgs = 16;

// An instance is live (in its thread's stack of instances), or a zombie:
// dropped from that stack because its frame looked gone (longjmp, an
// exception, a thread's exit), but kept, so that a return through its stub
// (the frame was on another stack all along: a coroutine's) still goes
// home. A zombie is freed once its stack slot no longer holds its stub.
// One that returns on another thread than its own is marked returned, and
// its own thread frees it.
enum InstanceState : uint32_t {
  kInstanceFree = 0,
  kInstanceLive,
  kInstanceZombie,
  kInstanceReturned,
  kInstanceSpare,  // freed, kept by its thread (`tid`) for its next call
};

struct ReturnInstance {
  uint64_t return_address;  // first: the return stub's unwind info reads it here
  uint64_t stack_slot;      // the call's frame (arch::entry_frame): on x86_64, where the
                            // return address was taken from
  uint64_t entry_args[kMaxEntryArgs];
  uint64_t handlers;    // bit k: the probe's k-th handler got this instance
  uint64_t function;    // the probed function's address, for the record
  uint64_t caller;      // where the call really returns to, for the record (a
                        // chained return's is its outer instance's)
  uint64_t entry_time;  // the entry's timestamp, for the record (the call's duration)
  // The events of `handlers` by id, when there are at most kNamedEvents:
  // the return reaches them without going through the probe's handlers.
  static constexpr uint32_t kNamedEvents = 4;
  uint16_t named_events[kNamedEvents];
  uint8_t named_count;   // 0: more than kNamedEvents, read `handlers`
  bool faultless_reads;  // the probe's fetches read with process_vm_readv (Probe::jump_only)
  uint32_t probe_id;     // its probe, looked up at the return: it may be gone
  uint32_t prev;         // the next older instance of its thread's list + 1; 0: none
  uint32_t next_free;    // in the free list
  uint32_t tid;          // the thread that took it: once it has exited, the
                         // instance is dropped
  std::atomic<uint32_t> state;
  bool on_altstack;  // taken on the signal stack
};

class ReturnInstancePool {
 public:
  explicit ReturnInstancePool(uint32_t count);
  ReturnInstancePool(const ReturnInstancePool&) = delete;
  ReturnInstancePool& operator=(const ReturnInstancePool&) = delete;

  std::optional<uint32_t> acquire() noexcept;
  void release(uint32_t index) noexcept;

  ReturnInstance& at(uint32_t index) noexcept { return instances_[index]; }
  uint32_t size() const { return count_; }
  // One past the highest index ever acquired: every instance not free is
  // below it. A sweep looks at those only; the free list hands back the
  // instances freed last first, so it stays near the most ever live at once.
  uint32_t used_bound() const { return used_bound_.load(std::memory_order_acquire); }
  // Where instance i's return address lives: data() + i * stride().
  uint64_t data() const { return reinterpret_cast<uint64_t>(instances_.get()); }
  static constexpr uint64_t stride() { return sizeof(ReturnInstance); }

 private:
  static constexpr uint32_t kEnd = UINT32_MAX;
  void raise_used_bound(uint32_t bound) noexcept;
  uint32_t count_;
  std::unique_ptr<ReturnInstance[]> instances_;
  // The free list's head: index in the low half, an ABA tag in the high.
  std::atomic<uint64_t> free_head_;
  std::atomic<uint32_t> used_bound_{0};
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_RETURN_INSTANCES_H_
