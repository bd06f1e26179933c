// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/json.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace dprobe::trace {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xc0u) == 0x80u; }

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), 0 if there is none.
size_t utf8_sequence_length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char low = 0x80;   // the second byte's range, narrowed by the lead
  unsigned char high = 0xbf;  // to exclude overlongs and surrogates
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (text.size() - i < length) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (!is_continuation(byte(k))) return 0;
  }
  return length;
}

void append_unicode_escape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char escape[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
  out.append(escape, sizeof(escape));
}

// A table, not comparisons: the scan over plain bytes is most of the time
// a JSON line takes.
constexpr auto kNeedsEscape = [] {
  std::array<bool, 256> table{};
  for (size_t c = 0; c < table.size(); ++c)
    table[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  return table;
}();

}  // namespace

void append_json_escaped(std::string& out, std::string_view text) {
  size_t run = 0;  // start of the bytes that are copied as they are
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!kNeedsEscape[c]) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t length = utf8_sequence_length(text, i);
      if (length != 0) {
        i += length;
        continue;
      }
    }
    out.append(text.data() + run, i - run);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else {
      append_unicode_escape(out, c);
    }
    run = ++i;
  }
  out.append(text.data() + run, text.size() - run);
}

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  append_json_escaped(out, text);
  out.push_back('"');
}

}  // namespace dprobe::trace
