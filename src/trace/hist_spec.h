// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A compiled hist trigger (--trigger 'GRP/EVENT:hist:keys=...'): which
// fields make the key, which are summed, how the entries sort, how many
// entries the table holds. The language compiles it from the kernel's
// syntax (lang/hist_trigger.h); the agent aggregates with it
// (trace/hist_table.h); the CLI prints with it (trace/hist_format.h).
// Every member is plain data, so the spec crosses the socket as is.
//
//   HistSpec spec;
//   spec.keys.push_back(HistKey{*find_record_field(fields, "size"), "size"});
//   spec.keys[0].modifiers = kHistLog2;
//   spec.text = hist_trigger_text(spec);  // "hist:keys=size.log2:vals=hitcount:..."
#ifndef DPROBE_TRACE_HIST_SPEC_H_
#define DPROBE_TRACE_HIST_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/record_fields.h"

namespace dprobe::trace {

// The kernel's limits (kernel/trace/tracing_map.h, trace_events_hist.c).
inline constexpr uint32_t kHistKeysMax = 3;         // TRACING_MAP_KEYS_MAX
inline constexpr uint32_t kHistValsMax = 3;         // TRACING_MAP_VALS_MAX, hitcount included
inline constexpr uint32_t kHistSortKeysMax = 2;     // TRACING_MAP_SORT_KEYS_MAX
inline constexpr uint32_t kHistSizeDefault = 2048;  // 1 << TRACING_MAP_BITS_DEFAULT
inline constexpr uint32_t kHistSizeMin = 1u << 7;   // TRACING_MAP_BITS_MIN
inline constexpr uint32_t kHistSizeMax = 1u << 17;  // TRACING_MAP_BITS_MAX
inline constexpr uint32_t kHistStackDepth = 16;     // HIST_STACKTRACE_DEPTH
inline constexpr uint32_t kHistStringBytes = 256;   // MAX_FILTER_STR_VAL
inline constexpr uint32_t kHistKeySizeMax = 256 + 16 * 8;  // HIST_KEY_SIZE_MAX
// A comm key is at most TASK_COMM_LEN bytes, so the table keeps only that
// many of the kernel's 256 (its key-size accounting still counts 256).
inline constexpr uint32_t kHistCommBytes = 16;

// Modifiers (the kernel's HIST_FIELD_FL_*), a bit set on a HistKey.
enum HistModifier : uint16_t {
  kHistHex = 1u << 0,
  kHistSym = 1u << 1,
  kHistSymOffset = 1u << 2,
  kHistExecname = 1u << 3,  // common_pid only: prints the comm seen at the key's first hit
  kHistSyscall = 1u << 4,
  kHistLog2 = 1u << 5,     // ilog2(roundup_pow_of_two(v))
  kHistBuckets = 1u << 6,  // v / buckets * buckets
  kHistUsecs = 1u << 7,    // $duration in microseconds (a dprobe extension); no-op elsewhere
};

// One key or value: an event field with its modifiers, or the user stack.
struct HistKey {
  RecordField field;  // unused for a stacktrace key
  std::string label;  // the name an entry prints ("size", "cpu", "common_stacktrace")
  bool stacktrace = false;
  uint16_t modifiers = 0;  // HistModifier bits
  uint64_t buckets = 0;    // N of .buckets=N

  bool has(HistModifier m) const noexcept { return (modifiers & m) != 0; }
  bool is_string() const noexcept {
    return !stacktrace &&
           (field.source == FieldSource::kString || field.source == FieldSource::kComm);
  }
};

// One sort key: hitcount, a key or a value, ascending unless descending.
struct HistSortKey {
  enum Source : uint8_t { kHitcount, kKey, kVal };
  Source source = kHitcount;
  uint8_t index = 0;  // into HistSpec::keys or HistSpec::vals
  bool descending = false;
};

struct HistSpec {
  std::vector<HistKey> keys;         // 1..kHistKeysMax
  std::vector<HistKey> vals;         // summed; hitcount is implicit, never listed
  std::vector<HistSortKey> sort;     // 1..kHistSortKeysMax; empty reads as hitcount ascending
  uint32_t size = kHistSizeDefault;  // entries, a power of two as the kernel rounds
  std::string text;  // the trigger as the kernel's "# trigger info:" prints it, without " [active]"
  std::string filter;  // the trigger's "if FILTER" expression, for the filter compiler; "" for none

  // Bytes of the key as the table stores it, and of one table entry.
  uint32_t key_bytes() const noexcept;
  uint32_t entry_bytes() const noexcept;
  bool has_execname() const noexcept;
};

// Bytes one key takes in a table entry: 8 for a number, kHistCommBytes
// for comm, kHistStringBytes for a string argument, 8 * kHistStackDepth
// for a stacktrace. (Inline, as the layout helpers below: the agent's hit
// path uses them, and must not call out of its own SSE-free code.)
inline uint32_t hist_key_storage(const HistKey& key) noexcept {
  if (key.stacktrace) return 8 * kHistStackDepth;
  if (key.field.source == FieldSource::kComm) return kHistCommBytes;
  if (key.field.source == FieldSource::kString) return kHistStringBytes;
  return 8;
}
// Bytes the kernel counts for the key against kHistKeySizeMax.
inline uint32_t hist_key_kernel_size(const HistKey& key) noexcept {
  if (key.stacktrace) return 8 * kHistStackDepth;
  return key.is_string() ? kHistStringBytes : 8;
}
// Strings and stacks: keys whose bytes end where their value ends.
inline bool hist_key_is_variable(const HistKey& key) noexcept {
  return key.stacktrace || key.is_string();
}
// Where key `index` starts in an entry's key bytes (index == keys.size():
// the key's whole size). Numbers come first, then strings and stacks, each
// in key order: a key's value then ends with its last string or stack,
// and the words after it are zero, which the table need not hash or
// compare (trace/hist_table.cc).
inline uint32_t hist_key_offset(const HistSpec& spec, size_t index) noexcept {
  const bool variable = index < spec.keys.size() && hist_key_is_variable(spec.keys[index]);
  uint32_t offset = 0;
  for (size_t i = 0; i < spec.keys.size(); ++i) {
    if (i == index) continue;
    const bool before = index >= spec.keys.size() ||
                        hist_key_is_variable(spec.keys[i]) < variable ||
                        (hist_key_is_variable(spec.keys[i]) == variable && i < index);
    if (before) offset += hist_key_storage(spec.keys[i]);
  }
  return offset;
}

inline uint32_t HistSpec::key_bytes() const noexcept { return hist_key_offset(*this, keys.size()); }

inline bool HistSpec::has_execname() const noexcept {
  for (const HistKey& key : keys) {
    if (key.has(kHistExecname)) return true;
  }
  return false;
}

// | hitcount | vals... | comm (with .execname) | key bytes |, all u64-aligned.
inline uint32_t HistSpec::entry_bytes() const noexcept {
  const auto vals_bytes = static_cast<uint32_t>(8 * vals.size());
  return 8 + vals_bytes + (has_execname() ? kHistCommBytes : 0) + key_bytes();
}

// The field as the trigger info spells it: "common_cpu" for cpu/CPU,
// "common_comm" for comm/COMM, "common_stacktrace", then ".modifier"
// ("=N" after buckets) as the kernel's hist_field_print.
std::string hist_field_text(const HistKey& key);
// "hist:keys=...:vals=hitcount,...:sort=...:size=N[ if FILTER]", the
// kernel's event_hist_trigger_print without its " [active]".
std::string hist_trigger_text(const HistSpec& spec);

// The kernel's ilog2(roundup_pow_of_two(v)), including its quirk: 0, 1
// and every v above 2^63 give 0 (the shift by 64 wraps to 1).
constexpr uint64_t hist_log2(uint64_t v) {
  if (v <= 1) return 0;
  const auto bits = static_cast<uint64_t>(64 - __builtin_clzll(v - 1));  // fls64(v - 1)
  return bits == 64 ? 0 : bits;
}

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_HIST_SPEC_H_
