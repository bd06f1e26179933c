// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The reader's side of a ring (trace/hit/ring_buffer.h): checking a block
// with the reason in words, and draining its records. The CLI's, never the
// hit path's.
#include <algorithm>
#include <cstring>
#include <string>

#include "trace/hit/ring_buffer.h"

namespace dprobe::trace {
namespace {

std::string num(uint64_t value) { return std::to_string(value); }

std::string layout_fault(RingFault fault, const void* mem, size_t bytes, uint64_t data_bytes) {
  switch (fault) {
    case RingFault::kNullMemory:
      return "ring memory is null";
    case RingFault::kMisaligned:
      return "ring memory is not " + num(alignof(RingControl)) + "-byte aligned";
    case RingFault::kTooSmall:
      return "ring of " + num(bytes) + " bytes is too small: the control page takes " +
             num(kRingControlBytes) + " and the data area needs at least " + num(kMinRingDataBytes);
    case RingFault::kNotPowerOfTwo:
      return "ring data area of " + num(data_bytes) + " bytes is not a power of two";
    case RingFault::kBadMagic:
      return "not a dprobe ring: bad magic " + num(static_cast<const RingControl*>(mem)->magic);
    case RingFault::kBadVersion:
      return "ring version " + num(static_cast<const RingControl*>(mem)->version) +
             " is not the supported version " + num(kRingVersion);
    case RingFault::kSizeMismatch:
      return "ring says its data area is " + num(static_cast<const RingControl*>(mem)->data_bytes) +
             " bytes, but the block holds " + num(data_bytes);
    case RingFault::kNone:
      break;
  }
  return "";
}

}  // namespace

Result<RingBuffer> RingBuffer::initialize(void* mem, size_t bytes, uint32_t pid, uint32_t tid,
                                          std::string_view comm) {
  uint64_t data_bytes = 0;
  if (const RingFault fault = check(mem, bytes, data_bytes); fault != RingFault::kNone) {
    return fail(layout_fault(fault, mem, bytes, data_bytes));
  }
  return *create(mem, bytes, pid, tid, comm);
}

Result<RingBuffer> RingBuffer::attach(void* mem, size_t bytes) {
  uint64_t data_bytes = 0;
  if (const RingFault fault = check_formatted(mem, bytes, data_bytes); fault != RingFault::kNone) {
    return fail(layout_fault(fault, mem, bytes, data_bytes));
  }
  return RingBuffer(mem, data_bytes);
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
