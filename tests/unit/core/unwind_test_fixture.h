// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the stack unwinder's tests share: the suite's fixture (the fault
// handler the unwinder's safe reads need, and this process's objects), and
// objects made up for the objects table.
#ifndef DPROBE_TESTS_UNIT_CORE_UNWIND_TEST_FIXTURE_H_
#define DPROBE_TESTS_UNIT_CORE_UNWIND_TEST_FIXTURE_H_

#include <cstdint>

#include "core/hit/stack_unwind.h"
#include "core/hit/unwind_objects.h"
#include "support/memory_faults.h"

namespace dprobe::core {

class StackUnwindTest : public support::MemoryFaultTest {
 protected:
  static void SetUpTestSuite() {
    MemoryFaultTest::SetUpTestSuite();
    objects_ = new UnwindObjects;
    objects_->assign(loaded_unwind_objects());
  }
  static void TearDownTestSuite() {
    delete objects_;
    objects_ = nullptr;
    MemoryFaultTest::TearDownTestSuite();
  }

 public:
  static inline UnwindObjects* objects_ = nullptr;
};

// An object covering text [begin, end), its tables at a made-up place.
inline UnwindObject object_at(uint64_t begin, uint64_t end) {
  return {begin, end, 0x1000, 0x1010, 1};
}

}  // namespace dprobe::core

#endif  // DPROBE_TESTS_UNIT_CORE_UNWIND_TEST_FIXTURE_H_
