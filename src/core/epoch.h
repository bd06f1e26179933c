// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Deferred freeing for what trap handlers read without locks (probe tables,
// probes): a writer unpublishes an object and retires it; it is freed only
// once no reader that could have seen it is left. Readers mark themselves
// in one of two epoch counters; a flip is allowed when the other counter
// is empty, and an object retired before a flip is freed at the next one.
// Nobody ever waits: reclaim() frees what it can and returns.
//
//   EpochDomain epochs;
//   { EpochReader reader(epochs); use(table.load()); }   // a trap handler
//   epochs.retire(std::move(old_table));  epochs.reclaim();   // a writer
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

class EpochDomain {
 public:
  uint32_t enter() noexcept {
    const uint32_t parity = epoch_.load() & 1;
    counts_[parity].fetch_add(1);
    return parity;
  }
  void exit(uint32_t parity) noexcept { counts_[parity].fetch_sub(1); }

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

 private:
  std::atomic<uint32_t> epoch_{0};
  std::atomic<uint64_t> counts_[2] = {0, 0};
  std::mutex mutex_;
  std::vector<std::unique_ptr<Retired>> current_;   // retired in this epoch
  std::vector<std::unique_ptr<Retired>> previous_;  // retired before the last flip
};

class EpochReader {
 public:
  explicit EpochReader(EpochDomain& domain) noexcept : domain_(domain), parity_(domain.enter()) {}
  ~EpochReader() { domain_.exit(parity_); }
  EpochReader(const EpochReader&) = delete;
  EpochReader& operator=(const EpochReader&) = delete;

 private:
  EpochDomain& domain_;
  uint32_t parity_;
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_EPOCH_H_
