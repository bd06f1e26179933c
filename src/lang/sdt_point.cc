// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/sdt_point.h"

#include <cctype>

namespace dprobe::lang {
namespace {

// What a provider or a name may hold: an identifier (they are C tokens in
// <sys/sdt.h>, and the event's group and name come from them), with globs.
bool is_sdt_word(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0])) != 0) return false;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '*' && c != '?') {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<Parsed<ParsedSdtPoint>> parse_sdt_point(std::string_view word, size_t column) {
  size_t start = word.find(kSdtPrefix);
  if (start == std::string_view::npos) return std::nullopt;
  if (start != 0 && word[start - 1] != ':') return std::nullopt;
  ParsedSdtPoint parsed;
  parsed.point_column = column + start;
  if (start != 0) {
    parsed.object = std::string(word.substr(0, start - 1));
    if (parsed.object.empty() || parsed.object.find_first_of(" '") != std::string::npos) {
      return fault(ErrorCode::BAD_PROBE_ADDR, column);
    }
  }
  const std::string_view rest = word.substr(start + kSdtPrefix.size());
  if (rest.ends_with("%return")) {
    return fault(ErrorCode::BAD_RETPROBE,
                 column + word.size() - std::string_view("%return").size());
  }
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return fault(ErrorCode::BAD_PROBE_ADDR, parsed.point_column);
  const std::string_view provider = rest.substr(0, colon);
  const std::string_view name = rest.substr(colon + 1);
  if (!is_sdt_word(provider) || !is_sdt_word(name)) {
    return fault(ErrorCode::BAD_PROBE_ADDR, parsed.point_column);
  }
  parsed.point.provider = std::string(provider);
  parsed.point.name = std::string(name);
  return parsed;
}

std::string format_sdt_point(const SdtPoint& point) {
  return std::string(kSdtPrefix) + point.provider + ":" + point.name;
}

}  // namespace dprobe::lang
