// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One predicate of a filter (lang/event_filter.h), FIELD OP VALUE, read as
// the kernel's parse_pred reads it and compiled to the instruction that
// tests it: a number compared as the field holds it, a string compared
// whole or matched by a glob the way the kernel classifies it.
//
//   PredicateParser parser(text, fields, program);
//   Predicate predicate;
//   auto end = parser.parse(start, predicate);  // where the predicate ends
#ifndef DPROBE_LANG_FILTER_PREDICATE_H_
#define DPROBE_LANG_FILTER_PREDICATE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "lang/event_filter.h"
#include "lang/filter_syntax.h"
#include "trace/hit/event_filter.h"
#include "trace/record_fields.h"

namespace dprobe::lang::filter {

// A predicate compiled: its test (its jumps left to the code generator),
// and whether its outcome is inverted (!=, a glob starting with '!').
struct Predicate {
  trace::FilterInsn insn;
  bool negate = false;
};

// The comparison as written; `!=` becomes == with its jumps swapped.
enum class Comparison : uint8_t {
  kGlob,
  kNotEqual,
  kEqual,
  kLessEqual,
  kLess,
  kGreaterEqual,
  kGreater,
  kBitAnd
};

// Reads the predicates of one filter's text; each one's field and string
// go into `program` (fields copied once, strings appended).
class PredicateParser {
 public:
  PredicateParser(std::string_view text, const std::vector<trace::RecordField>& fields,
                  trace::FilterProgram& program)
      : text_(text), fields_(fields), program_(program) {}

  // The kernel's parse_pred: FIELD OP VALUE from `start`, returning where
  // it ends; errors at the kernel's columns (see lang/event_filter.cc).
  Result<size_t, FilterError> parse(size_t start, Predicate& predicate);

 private:
  char at(size_t i) const { return char_at(text_, i); }
  Result<size_t, FilterError> string_operand(const trace::RecordField& field, Comparison comparison,
                                             size_t i, Predicate& predicate);
  Result<size_t, FilterError> number_operand(const trace::RecordField& field, Comparison comparison,
                                             size_t i, Predicate& predicate);
  // `insn` made the predicate on `field`.
  void fill_predicate(const trace::RecordField& field, trace::FilterInsn insn, bool negate,
                      Predicate& predicate);

  std::string_view text_;
  const std::vector<trace::RecordField>& fields_;
  trace::FilterProgram& program_;
};

}  // namespace dprobe::lang::filter

#endif  // DPROBE_LANG_FILTER_PREDICATE_H_
