// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "lang/filter_predicate.h"

#include <optional>
#include <string_view>

#include "base/strings.h"
#include "lang/filter_syntax.h"

namespace dprobe::lang::filter {
namespace {

using trace::FilterInsn;
using trace::FilterOp;
using trace::FilterProgram;
using trace::RecordField;

// The kernel's MAX_FILTER_STR_VAL (strings) and its number buffer.
constexpr size_t kMaxStringOperand = 255;
constexpr size_t kMaxNumberOperand = 23;

struct ComparisonSpelling {
  std::string_view text;
  Comparison comparison;
};

// In the kernel's order: "<=" before "<", and "&" last, so "&&" after a
// field name reads as "&" followed by a bad value, as in the kernel.
constexpr ComparisonSpelling kComparisons[] = {
    {"~", Comparison::kGlob},    {"!=", Comparison::kNotEqual},
    {"==", Comparison::kEqual},  {"<=", Comparison::kLessEqual},
    {"<", Comparison::kLess},    {">=", Comparison::kGreaterEqual},
    {">", Comparison::kGreater}, {"&", Comparison::kBitAnd},
};

FilterOp number_op(Comparison comparison) {
  switch (comparison) {
    case Comparison::kLess:
      return FilterOp::kLess;
    case Comparison::kLessEqual:
      return FilterOp::kLessEqual;
    case Comparison::kGreater:
      return FilterOp::kGreater;
    case Comparison::kGreaterEqual:
      return FilterOp::kGreaterEqual;
    case Comparison::kBitAnd:
      return FilterOp::kBitsSet;
    default:
      return FilterOp::kEqual;
  }
}

// A ~ pattern, classified as the kernel's filter_parse_regex does: a
// leading '!' inverts the match; a '*' first, last or both makes a
// suffix, prefix or substring test of the rest; any other '*', '?', '['
// or '\' needs the full glob. A pattern starting with a digit is compared
// whole, '*' and all (the kernel's MATCH_INDEX, meant for function
// indexes, which filters fall into too).
struct StringTest {
  FilterOp op = FilterOp::kStringEqual;
  bool negate = false;
  std::string_view pattern;
};

StringTest classify_glob(std::string_view pattern) {
  StringTest test;
  if (!pattern.empty() && pattern[0] == '!') {
    test.negate = true;
    pattern.remove_prefix(1);
  }
  test.pattern = pattern;
  if (!pattern.empty() && is_digit(pattern[0])) return test;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '[' || c == '?' || c == '\\') {
      test.op = FilterOp::kStringGlob;
      return test;
    }
    if (c != '*') continue;
    if (i == 0) {
      test.op = FilterOp::kStringSuffix;
    } else if (i + 1 == pattern.size()) {
      const bool both = test.op == FilterOp::kStringSuffix;
      test.op = both ? FilterOp::kStringContains : FilterOp::kStringPrefix;
      pattern = pattern.substr(0, i);
    } else {
      test.op = FilterOp::kStringGlob;
      return test;
    }
  }
  if (!pattern.empty() && pattern[0] == '*') pattern.remove_prefix(1);
  test.pattern = pattern;
  return test;
}

// A number as the field holds it: cut to its size, sign-extended if it is
// signed (the kernel casts the value to the field's type to compare).
uint64_t fit_to_field(uint64_t value, const RecordField& field) {
  if (field.source != trace::FieldSource::kNumber || field.size >= 8) return value;
  const unsigned bits = field.size * 8u;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  value &= mask;
  if (field.is_signed && ((value >> (bits - 1)) & 1) != 0) value |= ~mask;
  return value;
}

// The field's index in the program, each field copied once.
uint16_t field_index(const RecordField& field, FilterProgram& program) {
  for (size_t i = 0; i < program.fields.size(); ++i) {
    if (program.fields[i].name == field.name) return static_cast<uint16_t>(i);
  }
  program.fields.push_back(field);
  return static_cast<uint16_t>(program.fields.size() - 1);
}

}  // namespace

Result<size_t, FilterError> PredicateParser::parse(size_t start, Predicate& predicate) {
  size_t i = start;
  if (at(i) == '$') ++i;  // $duration, dprobe's own field
  while (is_alnum(at(i)) || at(i) == '_') ++i;
  if (i == start) return filter_error(kMissingField, i + 1);
  const RecordField* field = trace::find_record_field(fields_, text_.substr(start, i - start));
  if (field == nullptr) return filter_error(kFieldNotFound, i + 1);
  skip_spaces(text_, i);
  const ComparisonSpelling* comparison = nullptr;
  for (const ComparisonSpelling& spelling : kComparisons) {
    if (text_.substr(i).starts_with(spelling.text)) {
      comparison = &spelling;
      break;
    }
  }
  if (comparison == nullptr) return filter_error(kInvalidOp, i + 1);
  i += comparison->text.size();
  skip_spaces(text_, i);
  if (is_quote(at(i))) return string_operand(*field, comparison->comparison, i, predicate);
  if (is_digit(at(i)) || at(i) == '-') {
    return number_operand(*field, comparison->comparison, i, predicate);
  }
  return filter_error(kInvalidValue, i + 1);
}

Result<size_t, FilterError> PredicateParser::string_operand(const RecordField& field,
                                                            Comparison comparison, size_t i,
                                                            Predicate& predicate) {
  if (comparison != Comparison::kEqual && comparison != Comparison::kNotEqual &&
      comparison != Comparison::kGlob) {
    return filter_error(kIllegalFieldOp, i + 1);
  }
  if (!field.is_string()) return filter_error(kExpectDigit, i + 1);
  const size_t close = text_.find(text_[i], i + 1);
  if (close == std::string_view::npos) return filter_error(kMissingQuote, text_.size() + 1);
  const std::string_view value = text_.substr(i + 1, close - i - 1);
  if (value.size() > kMaxStringOperand) return filter_error(kOperandTooLong, close + 1);
  StringTest test;
  if (comparison == Comparison::kGlob) {
    test = classify_glob(value);
  } else {
    test.pattern = value;
    test.negate = comparison == Comparison::kNotEqual;
  }
  FilterInsn insn;
  insn.op = test.op;
  insn.str_offset = static_cast<uint32_t>(program_.strings.size());
  insn.str_length = static_cast<uint16_t>(test.pattern.size());
  program_.strings.append(test.pattern);
  fill_predicate(field, insn, test.negate, predicate);
  return close + 1;
}

Result<size_t, FilterError> PredicateParser::number_operand(const RecordField& field,
                                                            Comparison comparison, size_t i,
                                                            Predicate& predicate) {
  if (field.is_string()) return filter_error(kExpectString, i + 1);
  if (comparison == Comparison::kGlob) return filter_error(kIllegalFieldOp, i + 1);
  const size_t start = i;
  if (at(i) == '-') ++i;
  while (is_alnum(at(i))) ++i;
  if (i - start > kMaxNumberOperand) return filter_error(kOperandTooLong, i + 1);
  // kstrtoll for signed fields, kstrtoull for the others, as the kernel.
  const std::string_view digits = text_.substr(start, i - start);
  std::optional<uint64_t> value;
  if (field.is_signed) {
    if (const auto s = parse_s64(digits)) value = static_cast<uint64_t>(*s);
  } else {
    value = parse_u64(digits);
  }
  if (!value) return filter_error(kIllegalIntval, start + 1);
  FilterInsn insn;
  insn.op = number_op(comparison);
  insn.value = fit_to_field(*value, field);
  fill_predicate(field, insn, comparison == Comparison::kNotEqual, predicate);
  return i;
}

void PredicateParser::fill_predicate(const RecordField& field, FilterInsn insn, bool negate,
                                     Predicate& predicate) {
  insn.field = field_index(field, program_);
  predicate = {insn, negate};
}

}  // namespace dprobe::lang::filter
