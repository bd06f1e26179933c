// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the parts of the filter compiler (lang/event_filter.h) share: the
// kernel's error messages and its character classes, and stepping through
// the text.
//
//   skip_spaces(text, i);
//   if (!is_digit(char_at(text, i))) return filter_error(kInvalidValue, i + 1);
#ifndef DPROBE_LANG_FILTER_SYNTAX_H_
#define DPROBE_LANG_FILTER_SYNTAX_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"
#include "lang/event_filter.h"

namespace dprobe::lang::filter {

// The kernel's err_text[] (kernel/trace/trace_events_filter.c).
inline constexpr std::string_view kInvalidOp = "Invalid operator";
inline constexpr std::string_view kTooManyOpen = "Too many '('";
inline constexpr std::string_view kTooManyClose = "Too few '('";
inline constexpr std::string_view kMissingQuote = "Missing matching quote";
inline constexpr std::string_view kOperandTooLong = "Operand too long";
inline constexpr std::string_view kExpectString = "Expecting string field";
inline constexpr std::string_view kExpectDigit = "Expecting numeric field";
inline constexpr std::string_view kIllegalFieldOp = "Illegal operation for field type";
inline constexpr std::string_view kFieldNotFound = "Field not found";
inline constexpr std::string_view kIllegalIntval = "Illegal integer value";
inline constexpr std::string_view kTooManyPreds = "Too many terms in predicate expression";
inline constexpr std::string_view kInvalidValue = "Invalid value (did you forget quotes)?";
inline constexpr std::string_view kNoFilter = "No filter found";
// Where a field name is missing ("a == 1 && && b == 2", "(!)"), and where
// the text holds no term at all ("()", blanks), today's kernel has no
// message (its log says "Error" at column 0): the first gets the message
// older kernels gave (FILT_ERR_MISSING_FIELD), the second kNoFilter.
inline constexpr std::string_view kMissingField = "Missing field name and/or value";

inline Unexpected<FilterError> filter_error(std::string_view message, size_t column) {
  return unexpected(FilterError{std::string(message), column});
}

// The kernel's isspace/isdigit/isalnum, on ASCII.
inline bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool is_quote(char c) { return c == '"' || c == '\''; }

// The character at `i`, '\0' past the end.
inline char char_at(std::string_view text, size_t i) { return i < text.size() ? text[i] : '\0'; }

inline void skip_spaces(std::string_view text, size_t& i) {
  while (i < text.size() && is_space(text[i])) ++i;
}

}  // namespace dprobe::lang::filter

#endif  // DPROBE_LANG_FILTER_SYNTAX_H_
