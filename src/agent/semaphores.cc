// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/semaphores.h"

#include <algorithm>
#include <vector>

namespace dprobe::agent {
namespace {

struct Counted {
  uint64_t semaphore;
  uint64_t site;
};

// Never destroyed: a thread may disarm while the process exits.
std::vector<Counted>& counted() {
  static auto* entries = new std::vector<Counted>;
  return *entries;
}

// The program's own threads test the counter as we change it: atomically.
void add_to_counter(uint64_t semaphore, int16_t delta) {
  auto* counter = reinterpret_cast<uint16_t*>(semaphore);
  __atomic_fetch_add(counter, static_cast<uint16_t>(delta), __ATOMIC_RELAXED);
}

}  // namespace

void count_semaphore_up(uint64_t semaphore, uint64_t site) {
  if (semaphore == 0) return;
  add_to_counter(semaphore, 1);
  counted().push_back({semaphore, site});
}

void release_semaphores() {
  for (const Counted& entry : counted()) add_to_counter(entry.semaphore, -1);
  counted().clear();
}

void forget_semaphores_of_sites(uint64_t begin, uint64_t end) {
  std::erase_if(counted(),
                [&](const Counted& entry) { return entry.site >= begin && entry.site < end; });
}

}  // namespace dprobe::agent
