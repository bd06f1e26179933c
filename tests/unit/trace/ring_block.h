// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the ring buffer's tests share: a block of memory standing in for
// the shared memory a ring lives in, and a ring formatted in it.
#ifndef DPROBE_TESTS_UNIT_TRACE_RING_BLOCK_H_
#define DPROBE_TESTS_UNIT_TRACE_RING_BLOCK_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "trace/hit/ring_buffer.h"

namespace dprobe::trace::test_support {

inline constexpr uint16_t kEventType = 7;

// A page-aligned heap block standing in for shared memory.
class Block {
 public:
  explicit Block(size_t data_bytes)
      : bytes_(ring_bytes_for(data_bytes)), mem_(std::aligned_alloc(4096, bytes_)) {
    std::memset(mem_.get(), 0, bytes_);
  }
  void* get() const { return mem_.get(); }
  size_t size() const { return bytes_; }
  std::byte* data() const { return static_cast<std::byte*>(mem_.get()) + kRingControlBytes; }
  RingControl* control() const { return static_cast<RingControl*>(mem_.get()); }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  size_t bytes_;
  std::unique_ptr<void, Free> mem_;
};

inline RingBuffer make_ring(const Block& block) {
  auto ring = RingBuffer::initialize(block.get(), block.size(), 100, 101, "worker");
  EXPECT_TRUE(ring) << ring.error().message;
  return *ring;
}

}  // namespace dprobe::trace::test_support

#endif  // DPROBE_TESTS_UNIT_TRACE_RING_BLOCK_H_
