// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/jit_dump.h"

#include <cstring>

namespace dprobe::cli {
namespace {

constexpr size_t kMinHeader = 40;     // magic .. flags
constexpr size_t kRecordHeader = 16;  // id, total size, timestamp
constexpr uint32_t kCodeLoad = 0;
constexpr uint32_t kCodeMove = 1;
constexpr size_t kLoadFixed = 4 + 4 + 8 + 8 + 8 + 8;  // pid, tid, vma, code address, size, index
constexpr size_t kMoveFixed = 4 + 4 + 8 + 8 + 8 + 8 + 8;

template <typename T>
T load(std::string_view bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(value));
  return value;
}

void add_load(std::string_view body, PerfMapTable& table) {
  if (body.size() < kLoadFixed + 1) return;
  const auto address = load<uint64_t>(body, 16);
  const auto size = load<uint64_t>(body, 24);
  const std::string_view rest = body.substr(kLoadFixed);
  const size_t end = rest.find('\0');
  if (end == std::string_view::npos || end == 0 || size == 0 || address + size < address) return;
  table.add({address, size, rest.substr(0, end)});
}

// The code at the old address now lives at the new one, under its name.
void add_move(std::string_view body, PerfMapTable& table) {
  if (body.size() < kMoveFixed) return;
  const auto old_address = load<uint64_t>(body, 16);
  const auto new_address = load<uint64_t>(body, 24);
  const auto size = load<uint64_t>(body, 32);
  const auto moved = table.find(old_address);
  if (!moved || size == 0 || new_address + size < new_address) return;
  table.add({new_address, size, moved->name});
}

}  // namespace

size_t jitdump_header_size(std::string_view bytes) {
  if (bytes.size() < kMinHeader || load<uint32_t>(bytes, 0) != kJitDumpMagic) return 0;
  const auto size = load<uint32_t>(bytes, 8);
  return size >= kMinHeader ? size : 0;
}

size_t add_jitdump_records(std::string_view bytes, PerfMapTable& table) {
  size_t at = 0;
  while (at + kRecordHeader <= bytes.size()) {
    const auto id = load<uint32_t>(bytes, at);
    const auto size = load<uint32_t>(bytes, at + 4);
    if (size < kRecordHeader) break;      // broken: nothing after it is believed
    if (size > bytes.size() - at) break;  // still being written
    const std::string_view body = bytes.substr(at + kRecordHeader, size - kRecordHeader);
    if (id == kCodeLoad) add_load(body, table);
    if (id == kCodeMove) add_move(body, table);
    at += size;
  }
  return at;
}

}  // namespace dprobe::cli
