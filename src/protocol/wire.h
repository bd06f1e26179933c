// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A small binary encoding for the control channel: little-endian integers,
// length-prefixed strings and byte runs. The reader checks every length
// against what is left, so a truncated or hostile message is an error, not
// an overrun.
//
//   WireWriter w;  w.u32(7);  w.str("malloc");
//   WireReader r(w.bytes());  uint32_t n = r.u32();  std::string s = r.str();
//   if (!r.ok()) ...  // something was missing
//
// A list is its count, then its items: w.list(objects, put_object) and
// r.list(kMinObjectBytes, get_object) write and read one, each item by the
// function given; w.values(tids) and r.values<uint32_t>() one of plain
// values, as their bytes.
#ifndef DPROBE_PROTOCOL_WIRE_H_
#define DPROBE_PROTOCOL_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace dprobe::protocol {

class WireWriter {
 public:
  void u8(uint8_t v) { put(&v, 1); }
  void u16(uint16_t v) { put(&v, 2); }
  void u32(uint32_t v) { put(&v, 4); }
  void u64(uint64_t v) { put(&v, 8); }
  void i64(int64_t v) { put(&v, 8); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void str(std::string_view s);
  void raw(const void* data, size_t size) { put(data, size); }

  template <typename T, typename Put>
  void list(const std::vector<T>& items, Put put_item) {
    u32(static_cast<uint32_t>(items.size()));
    for (const T& item : items) put_item(*this, item);
  }
  template <typename T>
  void values(const std::vector<T>& items) {
    static_assert(std::is_trivially_copyable_v<T>);
    u32(static_cast<uint32_t>(items.size()));
    for (const T& item : items) raw(&item, sizeof(T));
  }

  const std::vector<std::byte>& bytes() const { return bytes_; }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  void put(const void* data, size_t size);
  std::vector<std::byte> bytes_;
};

class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  uint8_t u8() { return get<uint8_t>(); }
  uint16_t u16() { return get<uint16_t>(); }
  uint32_t u32() { return get<uint32_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  int64_t i64() { return get<int64_t>(); }
  bool boolean() { return u8() != 0; }
  std::string str();
  bool raw(void* out, size_t size);

  // A count of items each at least `min_item_bytes` long: refused (0, and
  // the reader fails) when the message could not possibly hold them.
  uint32_t count(size_t min_item_bytes);

  // Items each at least `min_item_bytes` long (count), read by get_item;
  // none after the reader has failed.
  template <typename Get>
  auto list(size_t min_item_bytes, Get get_item) {
    std::vector<std::invoke_result_t<Get&, WireReader&>> items;
    const uint32_t n = count(min_item_bytes);
    for (uint32_t i = 0; i < n && ok_; ++i) items.push_back(get_item(*this));
    return items;
  }
  template <typename T>
  std::vector<T> values() {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> items(count(sizeof(T)));
    for (T& item : items) raw(&item, sizeof(T));
    return items;
  }

  // A value no writer writes: the message is malformed.
  void refuse() { ok_ = false; }

  bool ok() const { return ok_; }
  bool at_end() const { return offset_ == bytes_.size(); }

 private:
  template <typename T>
  T get() {
    T value{};
    raw(&value, sizeof(T));
    return value;
  }

  std::span<const std::byte> bytes_;
  size_t offset_ = 0;
  bool ok_ = true;
};

}  // namespace dprobe::protocol

#endif  // DPROBE_PROTOCOL_WIRE_H_
