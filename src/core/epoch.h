// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Deferred freeing for what probe handlers read without locks (probe
// tables, probes): a writer unpublishes an object and retires it; it is
// freed only once no reader that could have seen it is left. Readers mark
// themselves in one of two epoch counts; a flip is allowed when the other
// count is empty, and an object retired before a flip is freed at the next
// one. Nobody ever waits: reclaim() frees what it can and returns.
//
// A probe hit enters a reader, so entering is the hot path: each thread
// counts itself in a slot (a cache line) of its own with plain stores, no
// locked instruction and no line shared with other threads. The fence that
// must order that store before the reader's loads is paid by the writer
// instead: once use_process_barrier() has registered the process with
// membarrier(2), every writer pass starts with MEMBARRIER_CMD_PRIVATE_
// EXPEDITED, a full barrier on every running thread of the process, the way
// liburcu's membarrier flavour and the kernel's own RCU move the cost to
// the updater. Without it, readers fence.
//
//   EpochDomain epochs;
//   epochs.use_process_barrier();                          // once, at start
//   { EpochReader reader(epochs); use(table.load()); }     // a probe hit
//   epochs.retire(std::move(old_table));  epochs.reclaim(); // a writer
#ifndef DPROBE_CORE_EPOCH_H_
#define DPROBE_CORE_EPOCH_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace dprobe::core {

// Something to free later: any object behind a unique_ptr.
struct Retired {
  virtual ~Retired() = default;
};
template <typename T>
struct RetiredObject final : Retired {
  explicit RetiredObject(std::unique_ptr<T> object) : held(std::move(object)) {}
  std::unique_ptr<T> held;
};

// One thread's reader counts: the low half counts readers of parity 0, the
// high half of parity 1 (a thread nests readers when a signal handler it
// runs hits a probe). Written only by the owning thread.
struct alignas(64) ReaderSlot {
  std::atomic<uint32_t> owner;  // the thread's id; 0: free
  std::atomic<uint64_t> counts;
};

// Each thread's own slot in the domain it read last, found again without a
// search. `serial` names the domain and its fork generation (0: none).
struct EpochThreadCache {
  uint64_t serial;
  ReaderSlot* slot;
};
__attribute__((
    tls_model("initial-exec"))) constinit inline thread_local EpochThreadCache t_epoch_cache{};

class EpochDomain {
 public:
  static constexpr uint32_t kReaderSlots = 256;  // more threads share one locked slot

  EpochDomain();
  EpochDomain(const EpochDomain&) = delete;
  EpochDomain& operator=(const EpochDomain&) = delete;

  // Where a reader's thread id comes from, for every domain: gettid unless
  // the process knows better (the agent, under a sandbox that forbids it).
  using ThreadIdSource = uint32_t (*)() noexcept;
  static void set_thread_id_source(ThreadIdSource source) noexcept;

  // What a reader holds to leave again.
  struct Entry {
    ReaderSlot* slot;
    uint64_t count;  // 1 << (32 * parity)
    uint64_t serial;
  };

  Entry enter() noexcept {
    ReaderSlot* slot = own_slot();
    const uint64_t count = uint64_t{1} << (32 * (epoch_.load(std::memory_order_relaxed) & 1));
    if (slot == &shared_) [[unlikely]] {
      shared_.counts.fetch_add(count);
    } else {
      slot->counts.store(slot->counts.load(std::memory_order_relaxed) + count,
                         std::memory_order_relaxed);
      if (readers_fence_.load(std::memory_order_relaxed)) [[unlikely]] {
        std::atomic_thread_fence(std::memory_order_seq_cst);
      } else {
        std::atomic_signal_fence(std::memory_order_seq_cst);
      }
    }
    return {slot, count, serial_.load(std::memory_order_relaxed)};
  }

  void exit(const Entry& entry) noexcept {
    if (entry.slot == &shared_) [[unlikely]] {
      shared_.counts.fetch_sub(entry.count);
    } else if (entry.serial ==
               serial_.load(
                   std::memory_order_relaxed)) {  // else forked meanwhile: the slot was cleared
      // Release: what the reader loaded is done before it is seen gone.
      entry.slot->counts.store(entry.slot->counts.load(std::memory_order_relaxed) - entry.count,
                               std::memory_order_release);
    }
  }

  template <typename T>
  void retire(std::unique_ptr<T> object) {
    if (!object) return;
    std::lock_guard lock(mutex_);
    current_.push_back(std::make_unique<RetiredObject<T>>(std::move(object)));
  }

  // Frees what no reader can still hold; never waits. Returns how many
  // objects are still waiting.
  size_t reclaim();

  // Waits (up to `timeout`) until every reader that entered before the call
  // has left: two flips. False when readers kept it from happening in time.
  bool synchronize(std::chrono::milliseconds timeout = std::chrono::milliseconds(200));

  // Registers the process for expedited membarrier so that readers need no
  // fence. False (readers keep fencing) where the kernel refuses it. Call
  // before there are readers, and again in a forked child.
  bool use_process_barrier() noexcept;

  // In a forked child, whose only thread is the one that forked: the slots
  // were the parent's threads'. Readers alive across the fork leave without
  // touching the cleared slots.
  void forked() noexcept;

  // Frees the slots of threads that are gone (`alive` says, by thread id).
  void reap(bool (*alive)(uint32_t tid)) noexcept;

  // Slots owned by threads now (for tests).
  uint32_t owned_slots() const noexcept;

 private:
  ReaderSlot* own_slot() noexcept {
    const EpochThreadCache& cache = t_epoch_cache;
    if (cache.serial == serial_.load(std::memory_order_relaxed)) [[likely]]
      return cache.slot;
    return claim_slot();
  }
  ReaderSlot* claim_slot() noexcept;
  using RetiredList = std::vector<std::unique_ptr<Retired>>;
  size_t flip_if_quiet(uint32_t epoch, bool always, RetiredList& freed);
  bool writer_barrier() noexcept;
  uint64_t readers_of(uint32_t parity) const noexcept;

  std::atomic<uint32_t> epoch_{0};
  std::atomic<bool> readers_fence_{true};
  std::atomic<uint64_t>
      serial_;  // names this domain (and its fork generation) in each thread's cache
  ReaderSlot slots_[kReaderSlots];
  ReaderSlot shared_;  // for threads past kReaderSlots, with locked adds
  std::mutex mutex_;
  RetiredList current_;   // retired in this epoch
  RetiredList previous_;  // retired before the last flip
};

class EpochReader {
 public:
  explicit EpochReader(EpochDomain& domain) noexcept : domain_(domain), entry_(domain.enter()) {}
  ~EpochReader() { domain_.exit(entry_); }
  EpochReader(const EpochReader&) = delete;
  EpochReader& operator=(const EpochReader&) = delete;

 private:
  EpochDomain& domain_;
  EpochDomain::Entry entry_;
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_EPOCH_H_
