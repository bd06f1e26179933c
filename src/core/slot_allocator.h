// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Out-of-line slots near the code they stand for: within the host ISA's
// arch::kSlotReach of it, so that a copied instruction's pc-relative
// operand and the branch back still reach.
// Slot pages are mapped read+execute from the start and written through the
// text patcher, like the program's own code.
//
//   SlotAllocator slots(patcher);
//   auto slot = slots.allocate(probe_address);   // a kSlotBytes slot nearby
#ifndef DPROBE_CORE_SLOT_ALLOCATOR_H_
#define DPROBE_CORE_SLOT_ALLOCATOR_H_

#include <cstdint>
#include <vector>

#include "arch/probe_insn.h"
#include "base/result.h"

namespace dprobe::core {

class SlotAllocator {
 public:
  SlotAllocator() = default;
  SlotAllocator(const SlotAllocator&) = delete;
  SlotAllocator& operator=(const SlotAllocator&) = delete;
  ~SlotAllocator();

  // `bytes` of code memory within kReach of `near` (an out-of-line slot by
  // default; a trampoline is bigger).
  Result<uint64_t> allocate(uint64_t near, uint64_t bytes = arch::kSlotBytes);

  // How far a slot may be from its code.
  static constexpr uint64_t kReach = arch::kSlotReach;

 private:
  struct Page {
    uint64_t begin;
    uint64_t used;
  };
  Result<Page*> map_page_near(uint64_t near);
  std::vector<Page> pages_;
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_SLOT_ALLOCATOR_H_
