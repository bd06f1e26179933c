// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/semaphores.h"

#include <algorithm>
#include <vector>

namespace dprobe::agent {
namespace {

struct Counted {
  uint64_t semaphore;
  uint64_t site;
  bool lowered = false;  // taken back while the loader may unmap its object
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

bool in(const Counted& entry, uint64_t begin, uint64_t end) {
  return entry.site >= begin && entry.site < end;
}

}  // namespace

void count_semaphore_up(uint64_t semaphore, uint64_t site) {
  if (semaphore == 0) return;
  add_to_counter(semaphore, 1);
  counted().push_back({semaphore, site});
}

void release_semaphores() {
  for (const Counted& entry : counted()) {
    if (!entry.lowered) add_to_counter(entry.semaphore, -1);
  }
  counted().clear();
}

void lower_semaphores_of_sites(uint64_t begin, uint64_t end) {
  for (Counted& entry : counted()) {
    if (!in(entry, begin, end) || entry.lowered) continue;
    add_to_counter(entry.semaphore, -1);
    entry.lowered = true;
  }
}

void raise_semaphores_of_sites(uint64_t begin, uint64_t end) {
  for (Counted& entry : counted()) {
    if (!in(entry, begin, end) || !entry.lowered) continue;
    add_to_counter(entry.semaphore, 1);
    entry.lowered = false;
  }
}

void forget_semaphores_of_sites(uint64_t begin, uint64_t end) {
  std::erase_if(counted(), [&](const Counted& entry) { return in(entry, begin, end); });
}

}  // namespace dprobe::agent
