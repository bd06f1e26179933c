// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The binary event record the agent writes and the CLI formats. Like the
// kernel's trace entries: a common header, then the event's fixed fields
// packed without padding, then the dynamic area that __data_loc fields
// (strings) point into.
//
//   | RecordHeader (24) | ip, or func + ret_ip | arg fields ... | strings |
//
// Records start 8-byte aligned in a ring; `size` is the length without the
// alignment padding.
#ifndef DPROBE_TRACE_RECORD_H_
#define DPROBE_TRACE_RECORD_H_

#include <cstdint>
#include <cstring>

namespace dprobe::trace {

struct RecordHeader {
  uint16_t type;       // event id (common_type)
  uint16_t size;       // bytes in the record, header and strings included
  uint32_t cpu;        // common_cpu
  uint32_t pid;        // common_pid: the process (tgid)
  uint32_t tid;        // common_tid: the thread
  uint64_t timestamp;  // common_ts, raw: the session's ClockKind (trace/trace_clock.h)
};
static_assert(sizeof(RecordHeader) == 24);

inline constexpr uint32_t kRecordHeaderSize = sizeof(RecordHeader);
inline constexpr uint32_t kMaxRecordSize = UINT16_MAX;
// Event ids are small integers assigned by the registry; this one is never
// an event and marks the unused tail of a ring before it wraps.
inline constexpr uint16_t kPaddingRecordType = UINT16_MAX;
// Not an event either: a thread's new name (16 bytes after the header),
// from this point of its ring on, as the kernel's comm record.
inline constexpr uint16_t kCommRecordType = UINT16_MAX - 1;
inline constexpr uint32_t kCommRecordSize = 24 + 16;

// A __data_loc word: the string's length (NUL included) in the high half,
// its offset from the record start in the low half. Length 0 means the
// string could not be read: it prints as (fault).
inline uint32_t make_data_loc(uint32_t offset, uint32_t length) {
  return (length << 16) | (offset & 0xffffu);
}
inline uint32_t data_loc_offset(uint32_t loc) { return loc & 0xffffu; }
inline uint32_t data_loc_length(uint32_t loc) { return loc >> 16; }

// Fields are packed, so they are read and written with memcpy.
template <typename T>
T load_field(const void* record, uint32_t offset) {
  T value;
  std::memcpy(&value, static_cast<const unsigned char*>(record) + offset, sizeof(T));
  return value;
}
template <typename T>
void store_field(void* record, uint32_t offset, T value) {
  std::memcpy(static_cast<unsigned char*>(record) + offset, &value, sizeof(T));
}

inline constexpr uint32_t align_record(uint32_t size) { return (size + 7u) & ~7u; }

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_RECORD_H_
