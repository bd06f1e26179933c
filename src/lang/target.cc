// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/target.h"

#include <algorithm>
#include <cctype>

#include "base/cxx_names.h"
#include "base/strings.h"

namespace dprobe::lang {
namespace {

using core::TargetKind;

Parsed<void> parse_address(std::string_view text, size_t column, size_t target_column,
                           core::ProbeTarget& target) {
  if (!target.object.empty() && is_path(target.object)) {
    // PATH:0xOFFSET, exactly as uprobe_events takes it.
    const auto offset = parse_u64(text);
    if (!offset || *offset > INT64_MAX) return fault(ErrorCode::BAD_UPROBE_OFFS, column);
    target.kind = TargetKind::kFileOffset;
    target.offset = static_cast<int64_t>(*offset);
    return {};
  }
  const auto address = parse_u64(text);
  if (!address) return fault(ErrorCode::BAD_PROBE_ADDR, target_column);
  target.kind = target.object.empty() ? TargetKind::kAddress : TargetKind::kObjectAddress;
  target.address = *address;
  return {};
}

// The +N or -N ending a C++ name, npos when none: its operators and
// template arguments hold '+' and '-' too.
size_t cxx_offset_sign(std::string_view text) {
  const size_t sign = text.find_last_of("+-");
  if (sign == std::string_view::npos || sign == 0) return std::string_view::npos;
  return parse_s64(text.substr(sign)) ? sign : std::string_view::npos;
}

Parsed<void> parse_symbol(std::string_view text, size_t target_column, core::ProbeTarget& target) {
  const size_t sign = is_cxx_name(text) ? cxx_offset_sign(text) : text.find_first_of("+-");
  if (sign != std::string_view::npos) {
    const auto offset = parse_s64(text.substr(sign));
    if (!offset) return fault(ErrorCode::BAD_PROBE_ADDR, target_column);
    target.offset = *offset;
    text = text.substr(0, sign);
    // A C++ name does not itself end in +N or -N: "f+1+2" has no one
    // reading (and would print back as another target).
    if (is_cxx_name(text) && cxx_offset_sign(text) != std::string_view::npos) {
      return fault(ErrorCode::BAD_PROBE_ADDR, target_column);
    }
  }
  // A ':' of its own (not half of a "::") names no symbol: "(a:f:1" would
  // print back as the source place it reads like.
  for (size_t colon = text.find(':'); colon != std::string_view::npos;
       colon = text.find(':', colon + 2)) {
    if (colon + 1 >= text.size() || text[colon + 1] != ':') {
      return fault(ErrorCode::BAD_PROBE_ADDR, target_column);
    }
  }
  // Nor in %return: "f%return+4" or "f%return%return" would print back as
  // another probe.
  if (is_cxx_name(text) && text.ends_with("%return")) {
    return fault(ErrorCode::BAD_PROBE_ADDR, target_column);
  }
  if (text.empty()) return fault(ErrorCode::BAD_PROBE_ADDR, target_column);
  target.kind = TargetKind::kSymbol;
  target.symbol = std::string(text);
  return {};
}

}  // namespace

size_t object_separator(std::string_view word) {
  if (!is_cxx_name(word)) return word.rfind(':');  // mangled symbols hold no ':'
  const size_t name = std::min(word.find("::"), word.find('('));
  return name == 0 ? std::string_view::npos : word.rfind(':', name - 1);
}

Parsed<ParsedTarget> parse_target(std::string_view word, size_t column) {
  ParsedTarget parsed;
  // C++ has an operator%: only a "%return" at the end is the suffix there.
  const size_t percent = is_cxx_name(word) && word.ends_with("%return")
                             ? word.size() - std::string_view("%return").size()
                         : is_cxx_name(word) ? std::string_view::npos
                                             : word.find('%');
  if (percent != std::string_view::npos) {
    if (word.substr(percent) != "%return") {
      return fault(ErrorCode::BAD_ADDR_SUFFIX, column + percent);
    }
    parsed.has_return_suffix = true;
    word = word.substr(0, percent);
  }

  const size_t colon = object_separator(word);
  std::string_view place = word;
  if (colon != std::string_view::npos) {
    if (colon == 0) return fault(ErrorCode::BAD_PROBE_ADDR, column);
    // Only a quoted C++ name may hold a space or a quote: an object's path
    // cannot (the kernel's uprobe_events takes no space either).
    if (word.substr(0, colon).find_first_of(" '") != std::string_view::npos) {
      return fault(ErrorCode::BAD_PROBE_ADDR, column);
    }
    parsed.target.object = std::string(word.substr(0, colon));
    place = word.substr(colon + 1);
  }
  parsed.symbol_column = column + (word.size() - place.size());
  if (place.empty()) return fault(ErrorCode::BAD_PROBE_ADDR, column);

  const bool numeric = std::isdigit(static_cast<unsigned char>(place[0])) != 0;
  auto result = numeric ? parse_address(place, parsed.symbol_column, column, parsed.target)
                        : parse_symbol(place, column, parsed.target);
  if (!result) return unexpected(result.error());
  return parsed;
}

}  // namespace dprobe::lang
