// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Probes by address, for the trap handler: an open-addressing hash table
// built before anything is armed and only read afterwards, so a lookup is a
// few loads, takes no lock and is safe in a signal handler.
//
//   ProbeTable table(probes);          // build
//   const Probe* p = table.find(pc);   // on a trap
#ifndef DPROBE_CORE_PROBE_TABLE_H_
#define DPROBE_CORE_PROBE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dprobe::core {

struct Probe;

class ProbeTable {
 public:
  ProbeTable() = default;
  // By address.
  explicit ProbeTable(const std::vector<Probe*>& probes);
  // By any non-zero key (the probes' ids).
  ProbeTable(const std::vector<Probe*>& probes, uint64_t (*key)(const Probe&));

  // Inline: a hit looks its probe up here first.
  const Probe* find(uint64_t key) const noexcept {
    if (entries_.empty()) return nullptr;
    for (uint64_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const Entry& entry = entries_[i];
      if (entry.address == key) return entry.probe;
      if (entry.address == 0) return nullptr;
    }
  }
  size_t size() const { return count_; }

 private:
  struct Entry {
    uint64_t address;  // 0: empty
    const Probe* probe;
  };
  static uint64_t hash(uint64_t address) noexcept {
    return (address * 0x9e3779b97f4a7c15ull) >> 20;
  }
  std::vector<Entry> entries_;
  uint64_t mask_ = 0;
  size_t count_ = 0;
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_PROBE_TABLE_H_
