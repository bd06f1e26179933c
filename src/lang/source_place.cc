// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/source_place.h"

#include <cctype>

#include "base/strings.h"

namespace dprobe::lang {
namespace {

constexpr std::string_view kReturnSuffix = "%return";

// The decimal line number after the last ':', if the word ends in one.
std::optional<int> trailing_line(std::string_view word, size_t* colon) {
  *colon = word.rfind(':');
  if (*colon == std::string_view::npos || *colon + 1 >= word.size()) return std::nullopt;
  const std::string_view digits = word.substr(*colon + 1);
  for (const char c : digits) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return std::nullopt;
  }
  if (digits.size() > 7) return std::nullopt;  // no source file is that long
  return std::stoi(std::string(digits));
}

// Splits "[OBJ:]NAME" at the last ':' (a source path holds none).
std::pair<std::string_view, std::string_view> split_object(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return {{}, text};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

}  // namespace

bool is_source_file_name(std::string_view name) {
  static constexpr std::string_view kSuffixes[] = {".c",  ".h",   ".cc",  ".cpp", ".cxx", ".c++",
                                                   ".hh", ".hpp", ".hxx", ".h++", ".C",   ".H",
                                                   ".S",  ".s",   ".inl", ".ipp", ".tcc"};
  for (std::string_view suffix : kSuffixes) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) return true;
  }
  return false;
}

std::optional<Parsed<ParsedPlace>> parse_source_place(std::string_view word, size_t column) {
  // No place holds a space or a quote (a C++ name joined across words does).
  if (word.find_first_of(" '") != std::string_view::npos) return std::nullopt;
  ParsedPlace parsed;
  if (word.ends_with(kReturnSuffix)) {
    parsed.has_return_suffix = true;
    word.remove_suffix(kReturnSuffix.size());
  }
  const size_t at = word.find('@');
  size_t colon = 0;
  const std::optional<int> line = trailing_line(word, &colon);
  if (at != std::string_view::npos) {
    // [OBJ:]FUNC@SRC[:RLN]
    const auto [object, function] = split_object(word.substr(0, at));
    if (!is_c_identifier(function)) return std::nullopt;
    const size_t file_end = line && colon > at ? colon : word.size();
    const std::string_view file = word.substr(at + 1, file_end - at - 1);
    if (file.empty()) return fault(ErrorCode::BAD_PROBE_ADDR, column + at + 1);
    // A second '@' or a '%' in SRC would print back as another target.
    if (const size_t bad = file.find_first_of("@%"); bad != std::string_view::npos) {
      return fault(ErrorCode::BAD_PROBE_ADDR, column + at + 1 + bad);
    }
    parsed.object = std::string(object);
    parsed.place = {std::string(function), std::string(file), line && colon > at ? *line : -1};
    parsed.place_column = column + (object.empty() ? 0 : object.size() + 1);
  } else {
    if (!line) return std::nullopt;
    const auto [object, name] = split_object(word.substr(0, colon));
    if (is_source_file_name(name)) {
      parsed.place = {{}, std::string(name), *line};
    } else if (is_c_identifier(name)) {
      parsed.place = {std::string(name), {}, *line};
    } else {
      return std::nullopt;  // OBJ:N, an address in an object
    }
    parsed.object = std::string(object);
    parsed.place_column = column + (object.empty() ? 0 : object.size() + 1);
  }
  if (parsed.has_return_suffix && parsed.place.line >= 0) {
    return fault(ErrorCode::BAD_RETPROBE, column);
  }
  return parsed;
}

std::string format_source_place(const SourcePlace& place) {
  std::string out = place.function;
  if (!place.function.empty() && !place.file.empty()) out += "@";
  out += place.file;
  if (place.line >= 0) out += ":" + std::to_string(place.line);
  return out;
}

}  // namespace dprobe::lang
