// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the two line formats of the formatter (formatter.cc, the ftrace
// text; formatter_json.cc, JSON) share: a view of a record that no broken
// field reads past, and numbers written as the kernel writes them. Inline:
// every line goes through them, millions a second. Internal to trace/.
#ifndef DPROBE_TRACE_FORMATTER_PARTS_H_
#define DPROBE_TRACE_FORMATTER_PARTS_H_

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "trace/event.h"
#include "trace/hit/fetch_type.h"
#include "trace/record.h"
#include "trace/symbolizer.h"

namespace dprobe::trace::formatter_parts {

inline constexpr std::string_view kBad = "(bad)";
inline constexpr std::string_view kFault = "(fault)";

// ---- Reading records ------------------------------------------------------

struct StringField {
  enum class State : uint8_t { kOk, kFault, kBad };
  State state;
  std::string_view text;  // the bytes before the NUL, as the kernel's %s
};

// The part of a record the formatter may read: the shorter of the buffer
// and the header's own size, so no field, however broken, reads past either.
class RecordView {
 public:
  explicit RecordView(std::span<const std::byte> record) {
    if (record.size() < kRecordHeaderSize) return;  // every field is then (bad)
    header_ = load_field<RecordHeader>(record.data(), 0);
    data_ = record.data();
    size_ = std::min<size_t>(record.size(), header_.size);
  }

  const RecordHeader& header() const { return header_; }

  bool contains(uint32_t offset, uint64_t length) const { return offset + length <= size_; }

  // A field of 1, 2, 4 or 8 bytes, zero-extended; nullopt outside the record.
  std::optional<uint64_t> load(uint32_t offset, uint32_t size) const {
    if (!contains(offset, size)) return std::nullopt;
    switch (size) {
      case 1:
        return load_field<uint8_t>(data_, offset);
      case 2:
        return load_field<uint16_t>(data_, offset);
      case 4:
        return load_field<uint32_t>(data_, offset);
      case 8:
        return load_field<uint64_t>(data_, offset);
      default:
        return std::nullopt;
    }
  }

  // The string a __data_loc word at `offset` points to.
  StringField string_at(uint32_t offset) const {
    const std::optional<uint64_t> loc = load(offset, 4);
    if (!loc) return {StringField::State::kBad, {}};
    const auto word = static_cast<uint32_t>(*loc);
    const uint32_t length = data_loc_length(word);
    const uint32_t start = data_loc_offset(word);
    if (length == 0) return {StringField::State::kFault, {}};
    if (!contains(start, length)) return {StringField::State::kBad, {}};
    const char* text = reinterpret_cast<const char*>(data_ + start);
    const void* nul = std::memchr(text, 0, length);
    const size_t size = nul ? static_cast<size_t>(static_cast<const char*>(nul) - text) : length;
    return {StringField::State::kOk, {text, size}};
  }

  // The user stack a __data_loc word at `offset` points to (--stacktrace):
  // its return addresses, innermost first; none if the field is broken.
  template <typename Frame>
  void for_each_frame(uint32_t offset, Frame frame) const {
    const std::optional<uint64_t> loc = load(offset, 4);
    if (!loc) return;
    const auto word = static_cast<uint32_t>(*loc);
    const uint32_t start = data_loc_offset(word);
    const uint32_t length = data_loc_length(word);
    if (!contains(start, length)) return;
    for (uint32_t at = start; at + 8 <= start + length; at += 8) {
      frame(load_field<uint64_t>(data_, at));
    }
  }

 private:
  RecordHeader header_{};
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

inline int64_t sign_extend(uint64_t value, uint32_t size) {
  switch (size) {
    case 1:
      return static_cast<int8_t>(static_cast<uint8_t>(value));
    case 2:
      return static_cast<int16_t>(static_cast<uint16_t>(value));
    case 4:
      return static_cast<int32_t>(static_cast<uint32_t>(value));
    default:
      return static_cast<int64_t>(value);
  }
}

// A hit with no name is no better than no hit: the address prints raw.
inline std::optional<SymbolHit> find_symbol(const Symbolizer* symbolizer, uint64_t address) {
  if (symbolizer == nullptr) return std::nullopt;
  std::optional<SymbolHit> hit = symbolizer->symbolize(address);
  if (hit && hit->name.empty()) return std::nullopt;
  return hit;
}

// ---- Writing numbers ------------------------------------------------------

inline void append_decimal(std::string& out, uint64_t value) {
  const fmt::format_int text(value);
  out.append(text.data(), text.size());
}

inline void append_signed(std::string& out, int64_t value) {
  const fmt::format_int text(value);
  out.append(text.data(), text.size());
}

// An f32 or f64 field's bits as the shortest decimal that reads back to
// them (1.5, 0.1, 1e+300, -inf, nan); whether the value is finite.
inline bool append_float(std::string& out, uint64_t bits, uint8_t size) {
  double value = 0;
  if (size == 4) {
    float narrow;
    const auto word = static_cast<uint32_t>(bits);
    std::memcpy(&narrow, &word, sizeof(narrow));
    char text[32];
    const auto end = std::to_chars(std::begin(text), std::end(text), narrow).ptr;
    out.append(text, end);
    return std::isfinite(narrow);
  }
  std::memcpy(&value, &bits, sizeof(value));
  char text[32];
  const auto end = std::to_chars(std::begin(text), std::end(text), value).ptr;
  out.append(text, end);
  return std::isfinite(value);
}

// The kernel's 0x%x: lower case, no padding. By hand rather than through
// fmt: a quarter of a line's time went into fmt's spec handling here.
inline void append_hex(std::string& out, uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char text[18];
  char* begin = std::end(text);
  do {
    *--begin = kDigits[value & 0xf];
    value >>= 4;
  } while (value != 0);
  *--begin = 'x';
  *--begin = '0';
  out.append(begin, static_cast<size_t>(std::end(text) - begin));
}

// printf's %5s / %03u: pads to `width` bytes. Bytes, not characters, so a
// UTF-8 comm lines up as it does in the kernel's output (fmt would count
// code points).
inline void append_padded(std::string& out, std::string_view text, size_t width, char fill) {
  if (text.size() < width) out.append(width - text.size(), fill);
  out.append(text);
}
// printf's %-7s.
inline void append_left_aligned(std::string& out, std::string_view text, size_t width) {
  out.append(text);
  if (text.size() < width) out.append(width - text.size(), ' ');
}

inline std::string_view digits(const fmt::format_int& number) {
  return {number.data(), number.size()};
}

// The tail of %pS after the name: "+0xoff/0xsize".
inline void append_symbol_offset(std::string& out, uint64_t offset, uint64_t size) {
  out.push_back('+');
  append_hex(out, offset);
  out.push_back('/');
  append_hex(out, size);
}

// seconds.microseconds, truncated as the kernel's trace output does.
struct Timestamp {
  uint64_t seconds;
  uint64_t micros;
};
inline Timestamp split_timestamp(uint64_t ns) {
  return {ns / 1000000000u, ns % 1000000000u / 1000u};
}

// What a line is written from and to: a record, the symbolizer (null: no
// symbols), the string the line is appended to.
class LineWriter {
 public:
  LineWriter(const RecordView& record, const Symbolizer* symbolizer, std::string& out)
      : record_(record), symbolizer_(symbolizer), out_(out) {}

 protected:
  void append(std::string_view text) { out_.append(text); }

  const RecordView& record_;
  const Symbolizer* symbolizer_;
  std::string& out_;
};

// An argument's value, or its array's values between `open` and `close`,
// comma-separated: value(type, offset) writes each.
template <typename Value>
void append_values(std::string& out, const EventArg& arg, char open, char close, Value value) {
  const FetchType& type = fetch_type(arg.type);
  if (arg.count == 0) return value(type, arg.offset);
  out.push_back(open);
  for (uint32_t i = 0; i < arg.count; ++i) {
    if (i != 0) out.push_back(',');
    value(type, arg.offset + i * type.size);
  }
  out.push_back(close);
}

}  // namespace dprobe::trace::formatter_parts

#endif  // DPROBE_TRACE_FORMATTER_PARTS_H_
