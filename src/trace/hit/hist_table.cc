// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The update half runs in the agent on a hit, from an optimized probe's
// trampoline that saves no vector state: plain integer code, every byte
// loop kept from becoming a memset/memcpy call. The merge half, the CLI's,
// is trace/hist_read.cc.
#include "trace/hit/hist_table.h"

#include <cstring>

#include "base/hit_path.h"
#include "base/no_libc_calls.h"

namespace dprobe::trace {
namespace {

constexpr uint32_t kHeaderBytes = sizeof(HistTableHeader);
constexpr uint32_t kKeyWordsMax = kHistKeySizeMax / 8;  // the largest key, in u64 words

// The shape the table layout is computed from; a table whose spec fails
// these is never written or read.
DPROBE_HIT_PATH bool valid_shape(const HistSpec& spec) {
  if (spec.size < kHistSizeMin || spec.size > kHistSizeMax) return false;
  if ((spec.size & (spec.size - 1)) != 0) return false;
  if (spec.keys.empty() || spec.keys.size() > kHistKeysMax) return false;
  if (spec.vals.size() >= kHistValsMax) return false;
  return spec.key_bytes() <= kHistKeySizeMax;
}

using Layout = HistPlan;

DPROBE_HIT_PATH Layout layout_of(const HistSpec& spec) { return hist_plan(spec); }

DPROBE_HIT_PATH uint64_t* slots_of(void* table) {
  return reinterpret_cast<uint64_t*>(static_cast<std::byte*>(table) + kHeaderBytes);
}
DPROBE_HIT_PATH uint64_t* entry_of(void* table, const Layout& l, uint64_t index) {
  std::byte* entries = static_cast<std::byte*>(table) + kHeaderBytes + uint64_t{8} * l.slots;
  return reinterpret_cast<uint64_t*>(entries + index * l.entry_bytes);
}

// ---- Agent side --------------------------------------------------------------
//
// A key is built only as far as its value goes: numbers first (every word
// written), then strings and stacks, each up to its last byte, the rest of
// its last word zeroed (hist_key_offset puts them last). The words past
// that end are zero in a stored entry, so a hit hashes and compares only
// the `used` words before it: a short string key costs a word or two, not
// the 256 bytes it may take. `used` is a function of the key's value (its
// strings' lengths, its stack's depth), and is kept in the slot's tag, so
// two keys that differ only in it never compare equal.

DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void zero_words(uint64_t* words, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) words[i] = 0;
}

DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void zero_bytes(std::byte* bytes, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) bytes[i] = std::byte{0};
}

DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void copy_chars(std::byte* dst, const char* src, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) dst[i] = static_cast<std::byte>(src[i]);
}

// Writes a string or stack key's value at `dst`; the bytes it wrote.
DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS uint32_t store_variable_key(std::byte* dst, const HistKey& key,
                                                                 const HitFields& hit,
                                                                 const uint64_t* stack,
                                                                 uint32_t depth) {
  if (key.stacktrace) {
    const uint32_t frames =
        stack == nullptr ? 0 : (depth < kHistStackDepth ? depth : kHistStackDepth);
    for (uint32_t i = 0; i < frames; ++i) __builtin_memcpy(dst + 8 * i, &stack[i], 8);
    return 8 * frames;
  }
  // The kernel's add_to_key: at most its key's size less the NUL.
  const uint32_t room = hist_key_storage(key) - (key.field.source == FieldSource::kComm ? 0u : 1u);
  const FieldString s = read_string(key.field, hit);
  const uint32_t length = s.length < room ? s.length : room;
  copy_chars(dst, s.data, length);
  return length;
}

// The hit's key into `key`; the words its value takes.
DPROBE_HIT_PATH uint32_t build_key(uint64_t* key, const HistSpec& spec, const Layout& l,
                                   const HitFields& hit, const uint64_t* stack, uint32_t depth) {
  auto* bytes = reinterpret_cast<std::byte*>(key);
  for (uint32_t n = 0; n < l.numbers; ++n) {
    const uint64_t value = hist_number_value(l.number_keys[n], hit);
    __builtin_memcpy(bytes + 8 * n, &value, 8);
  }
  uint32_t end = 8 * l.numbers;  // where the value written so far ends
  for (uint32_t n = l.numbers; n < l.numbers + l.variables; ++n) {
    const uint32_t at = l.key_offsets[l.order[n]];
    zero_bytes(bytes + end, at - end);  // the rest of an earlier string's storage
    end = at + store_variable_key(bytes + at, spec.keys[l.order[n]], hit, stack, depth);
  }
  const uint32_t used = (end + 7) / 8;
  zero_bytes(bytes + end, 8 * used - end);
  return used;
}

DPROBE_HIT_PATH uint64_t hash_words(const uint64_t* words, uint32_t n) {
  if (n == 1) {
    // The common key, one number: one multiply, its high bits folded down.
    const uint64_t h = (words[0] ^ 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
  }
  // Two lanes: a long key's words feed two independent multiply chains.
  uint64_t a = 0x9e3779b97f4a7c15ull ^ n;
  uint64_t b = 0xc2b2ae3d27d4eb4full;
  uint32_t i = 0;
  for (; i + 1 < n; i += 2) {
    a = (a ^ words[i]) * 0xff51afd7ed558ccdull;
    b = (b ^ words[i + 1]) * 0xc4ceb9fe1a85ec53ull;
    a ^= a >> 29;
    b ^= b >> 31;
  }
  if (i < n) a = ((a ^ words[i]) * 0xff51afd7ed558ccdull) ^ (a >> 29);
  uint64_t h = a ^ (b * 0x9e3779b97f4a7c15ull);
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

DPROBE_HIT_PATH bool same_words(const uint64_t* a, const uint64_t* b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// A new entry: its key (the rest of its storage zero) and, with
// .execname, the comm.
DPROBE_HIT_PATH DPROBE_NO_LIBC_CALLS void claim_entry(uint64_t* entry, const Layout& l,
                                                      const uint64_t* key, uint32_t used,
                                                      const HitFields& hit) {
  zero_words(entry, l.key_offset / 8);
  if (l.has_comm && hit.comm != nullptr) {
    __builtin_memcpy(reinterpret_cast<std::byte*>(entry) + l.comm_offset, hit.comm, kHistCommBytes);
  }
  uint64_t* entry_key = entry + l.key_offset / 8;
  for (uint32_t i = 0; i < used; ++i) entry_key[i] = key[i];
  zero_words(entry_key + used, l.key_words - used);
}

// The entry of `key` (its first `used` words), claimed if new; nullptr
// when the table is full.
DPROBE_HIT_PATH uint64_t* find_or_claim(void* table, const Layout& l, const uint64_t* key,
                                        uint32_t used, const HitFields& hit) {
  auto* header = static_cast<HistTableHeader*>(table);
  uint64_t* slots = slots_of(table);
  const uint64_t hash = hash_words(key, used);
  // The slot keeps 24 bits of the hash and the key's used words.
  const uint64_t tag = (hash >> 40) << 8 | used;
  const uint32_t mask = l.slots - 1;
  uint32_t at = static_cast<uint32_t>(hash) & mask;
  for (uint32_t probes = 0; probes < l.slots; ++probes, at = (at + 1) & mask) {
    const uint64_t slot = slots[at];
    if (slot == 0) {
      if (header->used >= l.size) return nullptr;
      const uint64_t index = header->used++;
      uint64_t* entry = entry_of(table, l, index);
      claim_entry(entry, l, key, used, hit);
      slots[at] = tag << 32 | (index + 1);
      return entry;
    }
    if (slot >> 32 != tag) continue;
    const uint64_t index = (slot & 0xffffffffu) - 1;
    if (index >= header->used || index >= l.size) continue;  // not ours: the program wrote here
    uint64_t* entry = entry_of(table, l, index);
    if (same_words(entry + l.key_offset / 8, key, used)) return entry;
  }
  return nullptr;
}

}  // namespace

DPROBE_HIT_PATH HistPlan hist_plan(const HistSpec& spec) {
  HistPlan l;
  if (!valid_shape(spec)) return l;
  l.valid = true;
  l.size = spec.size;
  l.slots = 2 * spec.size;
  l.entry_bytes = spec.entry_bytes();
  l.vals = static_cast<uint32_t>(spec.vals.size());
  for (uint32_t v = 0; v < l.vals; ++v) l.values[v] = hist_number(spec.vals[v]);
  l.has_comm = spec.has_execname();
  l.comm_offset = 8 + 8 * l.vals;
  l.key_offset = l.comm_offset + (l.has_comm ? kHistCommBytes : 0);
  l.key_words = spec.key_bytes() / 8;
  for (size_t i = 0; i < spec.keys.size(); ++i) {
    l.key_offsets[i] = hist_key_offset(spec, i);
    if (!hist_key_is_variable(spec.keys[i])) {
      l.number_keys[l.numbers] = hist_number(spec.keys[i]);
      l.order[l.numbers++] = static_cast<uint8_t>(i);
    }
  }
  for (size_t i = 0; i < spec.keys.size(); ++i) {
    if (hist_key_is_variable(spec.keys[i])) {
      l.order[l.numbers + l.variables++] = static_cast<uint8_t>(i);
    }
  }
  return l;
}

uint64_t hist_table_bytes(const HistSpec& spec) {
  if (!valid_shape(spec)) return 0;
  const Layout l = layout_of(spec);
  return kHeaderBytes + uint64_t{8} * l.slots + uint64_t{l.entry_bytes} * l.size;
}

void hist_table_init(void* table, const HistSpec& spec) noexcept {
  const uint64_t bytes = hist_table_bytes(spec);
  if (table != nullptr && bytes != 0) std::memset(table, 0, bytes);
}

DPROBE_HIT_PATH void hist_update(void* table, const HistSpec& spec, const HistPlan& plan,
                                 const HitFields& hit, const uint64_t* stack,
                                 uint32_t depth) noexcept {
  if (table == nullptr || !plan.valid) return;
  auto* header = static_cast<HistTableHeader*>(table);
  if (header->size == 0 && header->entry_bytes == 0) [[unlikely]] {
    header->size = plan.size;
    header->entry_bytes = plan.entry_bytes;
  }
  uint64_t key[kKeyWordsMax];
  const uint32_t used = build_key(key, spec, plan, hit, stack, depth);
  uint64_t* entry = find_or_claim(table, plan, key, used, hit);
  if (entry == nullptr) {
    ++header->dropped;
    return;
  }
  ++entry[0];
  for (uint32_t v = 0; v < plan.vals; ++v) entry[1 + v] += hist_number_value(plan.values[v], hit);
}

DPROBE_HIT_PATH void hist_update(void* table, const HistSpec& spec, const HitFields& hit,
                                 const uint64_t* stack, uint32_t depth) noexcept {
  const HistPlan plan = hist_plan(spec);
  hist_update(table, spec, plan, hit, stack, depth);
}

}  // namespace dprobe::trace
