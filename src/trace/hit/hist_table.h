// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A hist trigger's aggregation table in shared memory: fixed size, filled
// by one writer (a traced thread, in the agent, on a hit) and read by the
// CLI once the writer is done. Open addressing as the kernel's
// tracing_map: twice as many slots as entries, entries claimed in order of
// first hit and never freed, so a table never grows and a new key finding
// it full is counted as dropped.
//
//   | header (64) | slots[2 * size] (u64) | entries[size] (entry_bytes) |
//
//   header:  used (entries claimed), dropped, size and entry_bytes (the
//            shape, written at the first hit), reserved
//   slot:    key hash << 32 | (entry index + 1); 0 is empty
//   entry:   | hitcount | vals[n] | comm[16] (.execname) | key bytes |
//   key:     per key, 8 bytes for a number (the value after its modifier),
//            16 for comm, 256 for a string argument (255 bytes kept, as the
//            kernel's MAX_FILTER_STR_VAL), 8 * kHistStackDepth for a stack
//            (zero after the last frame)
//
// Zeroed memory is an empty table: fresh shared memory needs no init. The
// table must be 8-byte aligned. A table of 2048 entries keyed on one number
// takes 64 KiB; on a string, 560 KiB; only pages of claimed entries are
// touched.
//
//   hist_update(table, spec, hit, stack, depth);            // agent, on a hit
//   HistResult result;
//   for (const void* t : tables) hist_merge(result, t, hist_table_bytes(spec), spec);
#ifndef DPROBE_TRACE_HIST_TABLE_H_
#define DPROBE_TRACE_HIST_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/hist_spec.h"
#include "trace/record_fields.h"

namespace dprobe::trace {

struct HistTableHeader {
  uint64_t used;         // entries claimed, in first-hit order
  uint64_t dropped;      // hits of a new key that found every entry claimed
  uint32_t size;         // the spec's size and entry_bytes, written at the first hit:
  uint32_t entry_bytes;  // a reader refuses a table of another shape
  uint64_t reserved[5];
};
static_assert(sizeof(HistTableHeader) == 64);

// One table's bytes for `spec`; 0 for a spec no table can hold (size not
// a power of two in the kernel's range, key larger than the kernel's).
uint64_t hist_table_bytes(const HistSpec& spec);

// Zeroes a table. Optional: zeroed memory already is an empty table.
void hist_table_init(void* table, const HistSpec& spec) noexcept;

// A number key's or value's value on a hit, after .usecs, .log2 and
// .buckets, as the kernel's hist_fn_call computes it.
// A number key or value as a hit reads it: its field's place and shape
// and its modifiers, copied out of the HistKey into one small struct.
struct HistNumber {
  uint64_t buckets = 0;
  uint32_t offset = 0;
  FieldSource source = FieldSource::kNumber;
  uint8_t size = 8;
  bool is_signed = false;
  uint16_t modifiers = 0;
};
inline HistNumber hist_number(const HistKey& key) noexcept {
  return {key.buckets,    key.field.offset,    key.field.source,
          key.field.size, key.field.is_signed, key.modifiers};
}
inline uint64_t hist_number_value(const HistNumber& n, const HitFields& hit) noexcept {
  uint64_t value = read_number_at(n.source, n.offset, n.size, n.is_signed, hit);
  if ((n.modifiers & kHistUsecs) != 0 && n.source == FieldSource::kDuration) value /= 1000;
  if ((n.modifiers & kHistLog2) != 0) return hist_log2(value);
  if ((n.modifiers & kHistBuckets) != 0 && n.buckets != 0) return value / n.buckets * n.buckets;
  return value;
}
inline uint64_t hist_field_value(const HistKey& key, const HitFields& hit) noexcept {
  return hist_number_value(hist_number(key), hit);
}

// What a hit needs to know of a spec's table, worked out once per spec
// (hist_plan) rather than on every hit.
struct HistPlan {
  bool valid = false;  // false: a spec no table can hold; hist_update does nothing
  uint32_t size = 0;
  uint32_t slots = 0;  // 2 * size, a power of two
  uint32_t entry_bytes = 0;
  uint32_t vals = 0;
  uint32_t comm_offset = 0;  // in an entry, with .execname
  uint32_t key_offset = 0;   // in an entry
  uint32_t key_words = 0;
  bool has_comm = false;
  uint32_t key_offsets[kHistKeysMax] = {};  // hist_key_offset of each key
  // The keys in the order they are stored: numbers, then strings and stacks.
  uint8_t numbers = 0;
  uint8_t variables = 0;
  uint8_t order[kHistKeysMax] = {};
  // The number keys in that order, and the values.
  HistNumber number_keys[kHistKeysMax];
  HistNumber values[kHistValsMax];
};
HistPlan hist_plan(const HistSpec& spec);

// Agent side, on a hit: finds or claims the entry of the hit's key, adds 1
// to its hitcount and each value to its sum. `stack`/`depth`: the user
// stack for a stacktrace key (depth 0 when the trigger has none), frames
// past kHistStackDepth cut. Single writer per table; no allocation, no
// libc call, no SSE, at most 2 * size probes. `plan` is hist_plan(spec).
void hist_update(void* table, const HistSpec& spec, const HistPlan& plan, const HitFields& hit,
                 const uint64_t* stack, uint32_t depth) noexcept;
// The same, planning on the spot; a spec that hist_table_bytes refuses
// changes nothing.
void hist_update(void* table, const HistSpec& spec, const HitFields& hit, const uint64_t* stack,
                 uint32_t depth) noexcept;

// ---- CLI side ---------------------------------------------------------------

// One key of an entry, decoded.
struct HistKeyValue {
  uint64_t number = 0;           // a number key; the pid of .execname
  std::string text;              // a string key, without its NULs
  std::vector<uint64_t> frames;  // a stacktrace key, innermost first, no zeros

  bool operator==(const HistKeyValue&) const = default;
};

struct HistEntry {
  std::vector<HistKeyValue> keys;  // one per HistSpec::keys
  std::string comm;                // with .execname: the thread's name at the key's first hit
  uint64_t hitcount = 0;
  std::vector<uint64_t> vals;  // one sum per HistSpec::vals
};

// What the kernel's Totals block shows: hits = the hits counted in
// entries (the kernel's map->hits, the sum of the hitcounts), dropped =
// hits of new keys with the table full. hits + dropped = every hit.
struct HistResult {
  std::vector<HistEntry> entries;  // in merge order: table by table, first hit first
  uint64_t hits = 0;
  uint64_t dropped = 0;
};

// Adds one table's entries to `into`: equal keys summed; once `spec.size`
// distinct keys are held, a further new key's hits count as dropped. The
// bytes are untrusted (the traced program may have written them): a table
// of another shape, or smaller than hist_table_bytes(spec), adds nothing
// and returns false; an out-of-range count is clamped, strings end at
// their field. Never reads outside [table, table + table_bytes).
bool hist_merge(HistResult& into, const void* table, uint64_t table_bytes, const HistSpec& spec);

// Adds an already merged result (another process's) to `into` the same
// way: equal keys summed, new keys past `spec.size` dropped with their hits.
void hist_merge_result(HistResult& into, const HistResult& from, const HistSpec& spec);

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_HIST_TABLE_H_
