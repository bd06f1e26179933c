// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/ring_buffer.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

namespace dprobe::trace {
namespace {

// Messages are built with std::to_string: the agent links this file, and
// keeps its dependencies to the C and C++ runtimes.
std::string num(uint64_t value) { return std::to_string(value); }

// The data area size a block of `bytes` at `mem` can hold, if it is usable.
Result<uint64_t> data_bytes_of(const void* mem, size_t bytes) {
  if (mem == nullptr) return fail("ring memory is null");
  if (reinterpret_cast<uintptr_t>(mem) % alignof(RingControl) != 0) {
    return fail("ring memory is not " + num(alignof(RingControl)) + "-byte aligned");
  }
  if (bytes < ring_bytes_for(kMinRingDataBytes)) {
    return fail("ring of " + num(bytes) + " bytes is too small: the control page takes " +
                num(kRingControlBytes) + " and the data area needs at least " +
                num(kMinRingDataBytes));
  }
  const size_t data = bytes - kRingControlBytes;
  if (!std::has_single_bit(data)) {
    return fail("ring data area of " + num(data) + " bytes is not a power of two");
  }
  return uint64_t{data};
}

}  // namespace

RingBuffer::RingBuffer(void* mem, uint64_t data_bytes)
    : control_(static_cast<RingControl*>(mem)),
      data_(static_cast<std::byte*>(mem) + kRingControlBytes),
      data_bytes_(data_bytes) {}

Result<RingBuffer> RingBuffer::initialize(void* mem, size_t bytes, uint32_t pid, uint32_t tid,
                                          std::string_view comm) {
  auto data_bytes = data_bytes_of(mem, bytes);
  if (!data_bytes) return fail(data_bytes.error().message);
  // Starts the lifetime of the control block, atomics zeroed.
  auto* control = new (mem) RingControl{};
  control->version = kRingVersion;
  control->data_bytes = *data_bytes;
  control->pid = pid;
  control->tid = tid;
  std::memcpy(control->comm, comm.data(), std::min(comm.size(), sizeof(control->comm) - 1));
  control->magic = kRingMagic;
  return RingBuffer(mem, *data_bytes);
}

Result<RingBuffer> RingBuffer::attach(void* mem, size_t bytes) {
  auto data_bytes = data_bytes_of(mem, bytes);
  if (!data_bytes) return fail(data_bytes.error().message);
  const auto* control = static_cast<const RingControl*>(mem);
  if (control->magic != kRingMagic) {
    return fail("not a dprobe ring: bad magic " + num(control->magic));
  }
  if (control->version != kRingVersion) {
    return fail("ring version " + num(control->version) + " is not the supported version " +
                num(kRingVersion));
  }
  if (control->data_bytes != *data_bytes) {
    return fail("ring says its data area is " + num(control->data_bytes) +
                " bytes, but the block holds " + num(*data_bytes));
  }
  return RingBuffer(mem, *data_bytes);
}

RingWriter::RingWriter(const RingBuffer& ring) noexcept
    : control_(ring.control()),
      data_(ring.data()),
      mask_(ring.data_bytes() - 1),
      head_(control_->head.load(std::memory_order_acquire)),
      cached_tail_(control_->tail.load(std::memory_order_acquire)),
      written_(control_->written.load(std::memory_order_relaxed)) {}

bool RingWriter::has_room(uint64_t need) noexcept {
  // Acquire pairs with the reader's release of tail: its reads of the
  // records it gave back are done before we overwrite them.
  cached_tail_ = control_->tail.load(std::memory_order_acquire);
  return head_ + need - cached_tail_ <= mask_ + 1;
}

void* RingWriter::drop() noexcept {
  // Only this writer stores lost, so no read-modify-write is needed.
  control_->lost.store(control_->lost.load(std::memory_order_relaxed) + 1,
                       std::memory_order_release);
  return nullptr;
}

std::byte* RingWriter::pad_to_end(std::byte* marker, uint64_t to_end) noexcept {
  // to_end is a multiple of 8, so the type and size fields always fit; the
  // size may be clipped and is only a hint: padding always runs to the end.
  store_field<uint16_t>(marker, 0, kPaddingRecordType);
  store_field<uint16_t>(marker, kSizeFieldOffset,
                        static_cast<uint16_t>(std::min<uint64_t>(to_end, kMaxRecordSize)));
  return data_;
}

RingReader::RingReader(const RingBuffer& ring)
    : control_(ring.control()),
      data_(ring.data()),
      mask_(ring.data_bytes() - 1),
      tail_(control_->tail.load(std::memory_order_acquire)),
      published_tail_(tail_) {
  if (tail_ % 8 != 0) report("ring tail " + num(tail_) + " is not 8-byte aligned");
}

size_t RingReader::drain(RecordCallback callback) {
  if (corrupt()) return 0;
  // Acquire pairs with the writer's release of head: the records below it
  // are fully written.
  const uint64_t head = control_->head.load(std::memory_order_acquire);
  if (head - tail_ > mask_ + 1) {
    report("ring head " + num(head) + " is not within one ring of tail " + num(tail_));
    return 0;
  }
  size_t delivered = 0;
  Entry entry{};
  while (tail_ != head && next_entry(head - tail_, entry)) {
    if (entry.size != 0) {
      callback(static_cast<const RecordHeader*>(static_cast<const void*>(entry.start)),
               std::span(entry.start, entry.size));
      ++delivered;
    }
    tail_ += entry.bytes;
    // Giving space back record by record would move the tail's cache line
    // to the writer for every record once the ring runs full.
    if (tail_ - published_tail_ > mask_ / 16) publish_tail();
  }
  publish_tail();
  return delivered;
}

void RingReader::publish_tail() {
  // Release pairs with the writer's acquire: our reads of the records are
  // done before it may overwrite them.
  if (tail_ != published_tail_) control_->tail.store(tail_, std::memory_order_release);
  published_tail_ = tail_;
}

bool RingReader::next_entry(uint64_t available, Entry& entry) {
  const uint64_t offset = tail_ & mask_;
  const uint64_t to_end = mask_ + 1 - offset;
  const std::byte* start = data_ + offset;
  // offset is 8-aligned, so at least the type and size fields lie before
  // the end of the data area.
  if (load_field<uint16_t>(start, 0) == kPaddingRecordType) {
    // The writer pads only just before a record it puts at the start.
    if (to_end >= available) {
      return report("padding at ring byte " + num(tail_) + " is not followed by a record");
    }
    entry = {start, 0, to_end};
    return true;
  }
  if (available < kRecordHeaderSize) {
    return report(num(available) + " bytes at ring byte " + num(tail_) +
                  " before head cannot hold a record");
  }
  const uint32_t size = load_field<uint16_t>(start, offsetof(RecordHeader, size));
  const uint64_t bytes = align_record(size);
  if (size < kRecordHeaderSize) {
    return report("record at ring byte " + num(tail_) + " has size " + num(size) +
                  ", less than its " + num(kRecordHeaderSize) + "-byte header");
  }
  if (bytes > available) {
    return report("record at ring byte " + num(tail_) + " of size " + num(size) +
                  " runs past head (" + num(available) + " bytes left)");
  }
  if (bytes > to_end) {
    return report("record at ring byte " + num(tail_) + " of size " + num(size) +
                  " runs past the end of the ring");
  }
  entry = {start, size, bytes};
  return true;
}

bool RingReader::report(std::string what) {
  corruption_ = std::move(what);
  return false;
}

std::string_view RingReader::comm() const {
  // The producer's process could have overwritten the terminator.
  const char* comm = control_->comm;
  return {comm, strnlen(comm, sizeof(control_->comm))};
}

}  // namespace dprobe::trace
