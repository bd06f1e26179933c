// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/variable_path.h"

#include <cctype>

#include "base/strings.h"

namespace dprobe::lang {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The identifier at `at`: its length, 0 when there is none.
size_t identifier_length(std::string_view text, size_t at) {
  if (at >= text.size() || std::isdigit(static_cast<unsigned char>(text[at])) != 0) return 0;
  size_t end = at;
  while (end < text.size() && is_word_char(text[end])) ++end;
  return end - at;
}

}  // namespace

bool is_variable_path(std::string_view expr) {
  return !expr.empty() &&
         (std::isalpha(static_cast<unsigned char>(expr[0])) != 0 || expr[0] == '_');
}

Parsed<VariablePath> parse_variable_path(std::string_view expr, size_t column) {
  VariablePath path;
  size_t at = identifier_length(expr, 0);
  if (at == 0) return fault(ErrorCode::BAD_FETCH_ARG, column);
  path.name = std::string(expr.substr(0, at));
  while (at < expr.size()) {
    PathStep step{PathStep::kDot, {}, 0, column + at};
    if (expr[at] == '-') {
      // The kernel's BAD_HYPHEN: a '-' that does not begin "->".
      if (at + 1 >= expr.size() || expr[at + 1] != '>') {
        return fault(ErrorCode::BAD_HYPHEN, column + at);
      }
      step.kind = PathStep::kArrow;
      at += 2;
    } else if (expr[at] == '.') {
      at += 1;
    } else if (expr[at] == '[') {
      const size_t close = expr.find(']', at);
      if (close == std::string_view::npos) return fault(ErrorCode::BAD_FETCH_ARG, column + at);
      const auto index = parse_u64(expr.substr(at + 1, close - at - 1));
      if (!index || *index > INT32_MAX) return fault(ErrorCode::BAD_ARRAY_NUM, column + at + 1);
      step.kind = PathStep::kIndex;
      step.index = static_cast<int64_t>(*index);
      step.column = column + at + 1;
      path.steps.push_back(std::move(step));
      at = close + 1;
      continue;
    } else {
      return fault(ErrorCode::BAD_FETCH_ARG, column + at);
    }
    const size_t length = identifier_length(expr, at);
    if (length == 0) return fault(ErrorCode::BAD_FETCH_ARG, column + at);
    step.member = std::string(expr.substr(at, length));
    step.column = column + at;
    path.steps.push_back(std::move(step));
    at += length;
  }
  return path;
}

std::string variable_path_arg_name(std::string_view expr) {
  std::string name;
  bool gap = false;
  for (const char c : expr) {
    if (is_word_char(c)) {
      if (gap && !name.empty()) name += '_';
      name += c;
      gap = false;
    } else {
      gap = true;
    }
  }
  return name;
}

}  // namespace dprobe::lang
