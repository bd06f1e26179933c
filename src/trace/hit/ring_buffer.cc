// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/hit/ring_buffer.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <optional>

#include "base/hit_path.h"

namespace dprobe::trace {

DPROBE_HIT_PATH RingFault RingBuffer::check(const void* mem, size_t bytes,
                                            uint64_t& data_bytes) noexcept {
  if (mem == nullptr) return RingFault::kNullMemory;
  if (reinterpret_cast<uintptr_t>(mem) % alignof(RingControl) != 0) return RingFault::kMisaligned;
  if (bytes < ring_bytes_for(kMinRingDataBytes)) return RingFault::kTooSmall;
  data_bytes = bytes - kRingControlBytes;
  // Not std::has_single_bit: without a popcount instruction (arm64's
  // baseline) it is a call into libgcc.
  if ((data_bytes & (data_bytes - 1)) != 0) return RingFault::kNotPowerOfTwo;
  return RingFault::kNone;
}

DPROBE_HIT_PATH RingFault RingBuffer::check_formatted(const void* mem, size_t bytes,
                                                      uint64_t& data_bytes) noexcept {
  if (const RingFault fault = check(mem, bytes, data_bytes); fault != RingFault::kNone) {
    return fault;
  }
  const auto* control = static_cast<const RingControl*>(mem);
  if (control->magic != kRingMagic) return RingFault::kBadMagic;
  if (control->version != kRingVersion) return RingFault::kBadVersion;
  if (control->data_bytes != data_bytes) return RingFault::kSizeMismatch;
  return RingFault::kNone;
}

DPROBE_HIT_PATH RingBuffer::RingBuffer(void* mem, uint64_t data_bytes) noexcept
    : control_(static_cast<RingControl*>(mem)),
      data_(static_cast<std::byte*>(mem) + kRingControlBytes),
      data_bytes_(data_bytes) {}

DPROBE_HIT_PATH std::optional<RingBuffer> RingBuffer::create(void* mem, size_t bytes, uint32_t pid,
                                                             uint32_t tid,
                                                             std::string_view comm) noexcept {
  uint64_t data_bytes = 0;
  if (check(mem, bytes, data_bytes) != RingFault::kNone) return std::nullopt;
  // Starts the lifetime of the control block, atomics zeroed.
  auto* control = new (mem) RingControl{};
  control->version = kRingVersion;
  control->data_bytes = data_bytes;
  control->pid = pid;
  control->tid = tid;
  std::memcpy(control->comm, comm.data(), std::min(comm.size(), sizeof(control->comm) - 1));
  control->magic = kRingMagic;
  return RingBuffer(mem, data_bytes);
}

DPROBE_HIT_PATH std::optional<RingBuffer> RingBuffer::open(void* mem, size_t bytes) noexcept {
  uint64_t data_bytes = 0;
  if (check_formatted(mem, bytes, data_bytes) != RingFault::kNone) return std::nullopt;
  return RingBuffer(mem, data_bytes);
}

DPROBE_HIT_PATH RingWriter::RingWriter(const RingBuffer& ring) noexcept
    : control_(ring.control()),
      data_(ring.data()),
      mask_(ring.data_bytes() - 1),
      head_(control_->head.load(std::memory_order_acquire)),
      cached_tail_(control_->tail.load(std::memory_order_acquire)),
      written_(control_->written.load(std::memory_order_relaxed)) {}

DPROBE_HIT_PATH bool RingWriter::has_room(uint64_t need) noexcept {
  // Acquire pairs with the reader's release of tail: its reads of the
  // records it gave back are done before we overwrite them.
  cached_tail_ = control_->tail.load(std::memory_order_acquire);
  return head_ + need - cached_tail_ <= mask_ + 1;
}

DPROBE_HIT_PATH void* RingWriter::drop() noexcept {
  // Only this writer stores lost, so no read-modify-write is needed.
  control_->lost.store(control_->lost.load(std::memory_order_relaxed) + 1,
                       std::memory_order_release);
  return nullptr;
}

DPROBE_HIT_PATH std::byte* RingWriter::pad_to_end(std::byte* marker, uint64_t to_end) noexcept {
  // to_end is a multiple of 8, so the type and size fields always fit; the
  // size may be clipped and is only a hint: padding always runs to the end.
  store_field<uint16_t>(marker, 0, kPaddingRecordType);
  store_field<uint16_t>(marker, kSizeFieldOffset,
                        static_cast<uint16_t>(std::min<uint64_t>(to_end, kMaxRecordSize)));
  return data_;
}

}  // namespace dprobe::trace
