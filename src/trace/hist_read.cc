// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The merge half of the hist tables (trace/hit/hist_table.h), which the
// CLI runs on what it reads from the trace memory: it trusts nothing in it.
#include <cstring>
#include <map>
#include <string>

#include "trace/hit/hist_table.h"

namespace dprobe::trace {
namespace {

std::string bounded_text(const std::byte* bytes, uint32_t size) {
  const auto* chars = reinterpret_cast<const char*>(bytes);
  uint32_t length = 0;
  while (length < size && chars[length] != '\0') ++length;
  return std::string(chars, length);
}

HistKeyValue decode_key(const std::byte* bytes, const HistKey& key) {
  HistKeyValue value;
  if (key.stacktrace) {
    for (uint32_t i = 0; i < kHistStackDepth; ++i) {
      uint64_t pc;
      std::memcpy(&pc, bytes + 8 * i, 8);
      if (pc == 0) break;  // the kernel prints up to the first empty frame
      value.frames.push_back(pc);
    }
  } else if (key.is_string()) {
    value.text = bounded_text(bytes, hist_key_storage(key));
  } else {
    std::memcpy(&value.number, bytes, 8);
  }
  return value;
}

HistEntry decode_entry(const std::byte* entry, const HistSpec& spec, const HistPlan& l) {
  HistEntry out;
  std::memcpy(&out.hitcount, entry, 8);
  out.vals.resize(l.vals);
  for (uint32_t v = 0; v < l.vals; ++v) std::memcpy(&out.vals[v], entry + 8 + 8 * v, 8);
  if (l.has_comm) out.comm = bounded_text(entry + l.comm_offset, kHistCommBytes);
  for (size_t i = 0; i < spec.keys.size(); ++i) {
    out.keys.push_back(decode_key(entry + l.key_offset + hist_key_offset(spec, i), spec.keys[i]));
  }
  return out;
}

// Equal keys give equal strings, different keys different ones.
std::string identity(const HistEntry& entry) {
  std::string out;
  for (const HistKeyValue& key : entry.keys) {
    out.append(reinterpret_cast<const char*>(&key.number), 8);
    const uint64_t text_size = key.text.size();
    out.append(reinterpret_cast<const char*>(&text_size), 8);
    out += key.text;
    const uint64_t frames = key.frames.size();
    out.append(reinterpret_cast<const char*>(&frames), 8);
    out.append(reinterpret_cast<const char*>(key.frames.data()), 8 * key.frames.size());
  }
  return out;
}

void add_entry(HistResult& into, std::map<std::string, size_t>& index, HistEntry entry,
               uint32_t size) {
  std::string id = identity(entry);
  auto it = index.find(id);
  if (it != index.end()) {
    HistEntry& held = into.entries[it->second];
    held.hitcount += entry.hitcount;
    for (size_t v = 0; v < held.vals.size() && v < entry.vals.size(); ++v) {
      held.vals[v] += entry.vals[v];
    }
    into.hits += entry.hitcount;
    return;
  }
  if (into.entries.size() >= size) {
    into.dropped += entry.hitcount;
    return;
  }
  into.hits += entry.hitcount;
  index.emplace(std::move(id), into.entries.size());
  into.entries.push_back(std::move(entry));
}

// `into`'s entries by identity, for add_entry.
std::map<std::string, size_t> index_of(const HistResult& into) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < into.entries.size(); ++i) index.emplace(identity(into.entries[i]), i);
  return index;
}

}  // namespace

bool hist_merge(HistResult& into, const void* table, uint64_t table_bytes, const HistSpec& spec) {
  const uint64_t need = hist_table_bytes(spec);
  if (table == nullptr || need == 0 || table_bytes < need) return false;
  const HistPlan l = hist_plan(spec);
  HistTableHeader header;
  std::memcpy(&header, table, sizeof(header));
  if (header.size == 0 && header.entry_bytes == 0) return true;  // never hit
  if (header.size != l.size || header.entry_bytes != l.entry_bytes) return false;

  std::map<std::string, size_t> index = index_of(into);
  const uint64_t used = header.used < l.size ? header.used : l.size;
  const auto* entries =
      static_cast<const std::byte*>(table) + sizeof(HistTableHeader) + uint64_t{8} * l.slots;
  for (uint64_t i = 0; i < used; ++i) {
    add_entry(into, index, decode_entry(entries + i * l.entry_bytes, spec, l), l.size);
  }
  into.dropped += header.dropped;
  return true;
}

void hist_merge_result(HistResult& into, const HistResult& from, const HistSpec& spec) {
  std::map<std::string, size_t> index = index_of(into);
  for (const HistEntry& entry : from.entries) add_entry(into, index, entry, spec.size);
  into.dropped += from.dropped;
}

}  // namespace dprobe::trace
