// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/probe_table.h"

#include "base/hit_path.h"
#include "core/probe.h"

namespace dprobe::core {

ProbeTable::ProbeTable(const std::vector<Probe*>& probes)
    : ProbeTable(probes, [](const Probe& probe) { return probe.address; }) {}

ProbeTable::ProbeTable(const std::vector<Probe*>& probes, uint64_t (*key)(const Probe&)) {
  size_t capacity = 16;
  while (capacity < probes.size() * 2) capacity <<= 1;  // at most half full
  entries_.assign(capacity, Entry{0, nullptr});
  mask_ = capacity - 1;
  for (const Probe* probe : probes) {
    const uint64_t k = key(*probe);
    if (k == 0) continue;  // 0 marks an empty entry: no probe lives there
    ++count_;
    uint64_t i = hash(k) & mask_;
    while (entries_[i].address != 0) i = (i + 1) & mask_;
    entries_[i] = {k, probe};
  }
}

}  // namespace dprobe::core
