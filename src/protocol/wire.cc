// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "protocol/wire.h"

#include <cstring>

namespace dprobe::protocol {

void WireWriter::put(const void* data, size_t size) {
  const auto* first = static_cast<const std::byte*>(data);
  bytes_.insert(bytes_.end(), first, first + size);
}

void WireWriter::str(std::string_view s) {
  u32(static_cast<uint32_t>(s.size()));
  put(s.data(), s.size());
}

bool WireReader::raw(void* out, size_t size) {
  if (!ok_ || bytes_.size() - offset_ < size) {
    ok_ = false;
    return false;
  }
  if (size > 0) std::memcpy(out, bytes_.data() + offset_, size);
  offset_ += size;
  return true;
}

std::string WireReader::str() {
  const uint32_t size = u32();
  if (!ok_ || bytes_.size() - offset_ < size) {
    ok_ = false;
    return {};
  }
  std::string out(reinterpret_cast<const char*>(bytes_.data() + offset_), size);
  offset_ += size;
  return out;
}

uint32_t WireReader::count(size_t min_item_bytes) {
  const uint32_t n = u32();
  if (!ok_) return 0;
  if (min_item_bytes > 0 && n > (bytes_.size() - offset_) / min_item_bytes) {
    ok_ = false;
    return 0;
  }
  return n;
}

}  // namespace dprobe::protocol
