// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/type_suffix.h"

#include <cctype>

#include "base/strings.h"
#include "lang/limits.h"

namespace dprobe::lang {
namespace {

using trace::TypeId;

// $comm and immediate strings are strings already; no other type fits.
bool is_string_only_expr(std::string_view expr) {
  return expr == "$comm" || expr.substr(0, 2) == "\\\"";
}

// b<W>@<O>/<C> names the type u<C>; only the container is checked here.
const trace::FetchType* bitfield_container(std::string_view type) {
  const size_t slash = type.find('/');
  if (slash == std::string_view::npos) return nullptr;
  const auto bits = parse_u64(type.substr(slash + 1));
  if (!bits) return nullptr;
  switch (*bits) {
    case 8:
      return &trace::fetch_type(TypeId::kU8);
    case 16:
      return &trace::fetch_type(TypeId::kU16);
    case 32:
      return &trace::fetch_type(TypeId::kU32);
    case 64:
      return &trace::fetch_type(TypeId::kU64);
    default:
      return nullptr;
  }
}

// Leading decimal/hex/octal digits as strtoul would take them, for the
// width and offset of a bitfield, which are followed by '@' and '/'.
std::optional<uint64_t> take_number(std::string_view& text) {
  size_t end = 0;
  while (end < text.size() && text[end] != '@' && text[end] != '/') ++end;
  const auto value = parse_u64(text.substr(0, end));
  text.remove_prefix(end);
  return value;
}

// Whether the text after a ':' is spelled like a type (a known name, or a
// size class u/s/x/b followed by a digit), right or wrong.
bool looks_like_type(std::string_view text) {
  text = text.substr(0, text.find('['));
  if (text.empty() || trace::find_fetch_type(text) != nullptr) return true;
  const bool size_class = text[0] == 'u' || text[0] == 's' || text[0] == 'x' || text[0] == 'b';
  return size_class && text.size() > 1 && std::isdigit(static_cast<unsigned char>(text[1])) != 0;
}

// The ':' that starts the type. @[OBJ:]SYM may hold a ':' of its own, so
// there the type is after the last ':', and only if it is spelled like one.
size_t type_colon(std::string_view body) {
  if (body.empty() || body[0] != '@') return body.find(':');
  const size_t colon = body.rfind(':');
  if (colon == std::string_view::npos) return colon;
  const bool two_or_more = body.find(':') != colon;
  if (two_or_more || looks_like_type(body.substr(colon + 1))) return colon;
  return std::string_view::npos;
}

}  // namespace

Parsed<TypeSuffix> parse_type_suffix(std::string_view body, size_t body_column) {
  TypeSuffix suffix;
  const size_t colon = type_colon(body);
  suffix.expr = body.substr(0, colon);
  suffix.column = body_column;
  if (colon == std::string_view::npos) return suffix;

  suffix.has_type = true;
  suffix.column = body_column + colon + 1;
  std::string_view type = body.substr(colon + 1);
  const size_t open = type.find('[');
  if (open != std::string_view::npos) {
    const size_t count_column = suffix.column + open + 1;
    const size_t close = type.find(']', open);
    if (close == std::string_view::npos) {
      return fault(ErrorCode::ARRAY_NO_CLOSE, body_column + body.size());
    }
    if (close + 1 != type.size()) {
      return fault(ErrorCode::BAD_ARRAY_SUFFIX, suffix.column + close + 1);
    }
    const auto count = parse_u64(type.substr(open + 1, close - open - 1));
    if (!count || *count == 0) return fault(ErrorCode::BAD_ARRAY_NUM, count_column);
    if (*count > kMaxArrayLen) return fault(ErrorCode::ARRAY_TOO_BIG, count_column);
    suffix.count = static_cast<uint32_t>(*count);
    type = type.substr(0, open);
  }
  suffix.type = type;
  return suffix;
}

Parsed<ArgType> resolve_arg_type(const TypeSuffix& suffix) {
  if (is_string_only_expr(suffix.expr)) {
    if (suffix.count > 0 || (suffix.has_type && suffix.type != "string")) {
      return fault(ErrorCode::NEED_STRING_TYPE, suffix.column);
    }
    return ArgType{TypeId::kString, "string"};
  }
  if (!suffix.has_type) {
    return ArgType{trace::kDefaultType, std::string(trace::fetch_type(trace::kDefaultType).name)};
  }
  const trace::FetchType* type = is_bitfield_type(suffix.type)
                                     ? bitfield_container(suffix.type)
                                     : trace::find_fetch_type(suffix.type);
  if (type == nullptr) return fault(ErrorCode::BAD_TYPE, suffix.column);
  return ArgType{type->id, std::string(suffix.type)};
}

Parsed<Bitfield> parse_bitfield(std::string_view type, uint8_t container_bytes, size_t column) {
  std::string_view rest = type.substr(1);
  const auto width = take_number(rest);
  if (!width || *width == 0 || rest.empty() || rest[0] != '@') {
    return fault(ErrorCode::BAD_BITFIELD, column);
  }
  rest.remove_prefix(1);
  const auto offset = take_number(rest);
  if (!offset || rest.empty() || rest[0] != '/') return fault(ErrorCode::BAD_BITFIELD, column);
  if (*width + *offset > container_bytes * 8u) return fault(ErrorCode::BAD_BITFIELD, column);
  return Bitfield{static_cast<uint8_t>(*width), static_cast<uint8_t>(*offset)};
}

}  // namespace dprobe::lang
