// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The fields of an event that a filter compares and a hist trigger keys
// on: the event's arguments by name, and the fields every event has
// (common_pid, cpu, comm), as the kernel's filter and hist files see them.
// Resolved once, when a filter or trigger is compiled; read on a hit from
// the record just written, without a name lookup.
//
//   auto fields = record_fields(event);
//   const RecordField* size = find_record_field(fields, "size");
//   HitFields hit{record, comm, duration_ns};
//   uint64_t value = read_number(*size, hit);
#ifndef DPROBE_TRACE_RECORD_FIELDS_H_
#define DPROBE_TRACE_RECORD_FIELDS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event.h"
#include "trace/record.h"

namespace dprobe::trace {

// Where a field's value comes from on a hit.
enum class FieldSource : uint8_t {
  kNumber,    // `size` bytes at `offset` in the record, signed or not
  kString,    // a __data_loc word at `offset`: a string in the record
  kComm,      // the thread's name (comm, COMM), which the record does not hold
  kDuration,  // $duration: return events, nanoseconds since the entry
};

struct RecordField {
  std::string name;
  FieldSource source = FieldSource::kNumber;
  uint32_t offset = 0;
  uint8_t size = 8;
  bool is_signed = false;
  TypeId type = kDefaultType;  // how the field prints (x64 as hex, u64 as decimal)

  bool is_string() const { return source == FieldSource::kString || source == FieldSource::kComm; }
};

// The fields of `event`, in the order the kernel's format lists them:
// common_pid, cpu (also CPU and common_cpu), comm (also COMM), the ip
// fields, each scalar or string argument, and for return events $duration.
// Array and bitfield-free arguments are fields too; array arguments are
// not (the kernel cannot filter on them either).
std::vector<RecordField> record_fields(const EventDesc& event);

// The field named `name`, or nullptr.
const RecordField* find_record_field(const std::vector<RecordField>& fields, std::string_view name);

// What one hit gives to read its fields from: the record its fetch
// programs just wrote, the thread's name, and for a return event the time
// since its entry.
struct HitFields {
  const std::byte* record;
  const char* comm;  // 16 bytes, NUL-padded
  uint64_t duration_ns;
};

// A number field's value, sign-extended for signed fields; a string field
// reads as 0. Runs in the agent on a hit: no libc.
// The same, from the field's source, offset, size and sign alone.
inline uint64_t read_number_at(FieldSource source, uint32_t offset, uint8_t size, bool is_signed,
                               const HitFields& hit) noexcept {
  switch (source) {
    case FieldSource::kDuration:
      return hit.duration_ns;
    case FieldSource::kNumber:
      break;
    default:
      return 0;
  }
  const std::byte* at = hit.record + offset;
  switch (size) {
    case 1: {
      uint8_t v;
      __builtin_memcpy(&v, at, 1);
      return is_signed ? static_cast<uint64_t>(static_cast<int8_t>(v)) : v;
    }
    case 2: {
      uint16_t v;
      __builtin_memcpy(&v, at, 2);
      return is_signed ? static_cast<uint64_t>(static_cast<int16_t>(v)) : v;
    }
    case 4: {
      uint32_t v;
      __builtin_memcpy(&v, at, 4);
      return is_signed ? static_cast<uint64_t>(static_cast<int32_t>(v)) : v;
    }
    default: {
      uint64_t v;
      __builtin_memcpy(&v, at, 8);
      return v;
    }
  }
}
inline uint64_t read_number(const RecordField& field, const HitFields& hit) noexcept {
  return read_number_at(field.source, field.offset, field.size, field.is_signed, hit);
}

// A string field's bytes, without the NUL; empty for a faulted string and
// for a number field. Runs in the agent on a hit: no libc.
struct FieldString {
  const char* data;
  uint32_t length;
};
inline FieldString read_string_at(FieldSource source, uint32_t offset,
                                  const HitFields& hit) noexcept {
  if (source == FieldSource::kComm) {
    uint32_t length = 0;
    while (length < 16 && hit.comm[length] != '\0') ++length;
    return {hit.comm, length};
  }
  if (source != FieldSource::kString) return {"", 0};
  uint32_t loc;
  __builtin_memcpy(&loc, hit.record + offset, sizeof(loc));
  const uint32_t length = data_loc_length(loc);
  if (length == 0) return {"", 0};  // faulted
  const auto* data = reinterpret_cast<const char*>(hit.record + data_loc_offset(loc));
  return {data, data[length - 1] == '\0' ? length - 1 : length};
}
inline FieldString read_string(const RecordField& field, const HitFields& hit) noexcept {
  return read_string_at(field.source, field.offset, hit);
}

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_RECORD_FIELDS_H_
