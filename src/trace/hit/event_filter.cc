// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The filter interpreter. Everything from filter_matches down runs on a
// hit, maybe in a signal handler that interrupted the program inside libc:
// plain loops over bytes, no libc, no allocation, no recursion.
#include "trace/hit/event_filter.h"

#include <cstddef>
#include <cstdint>

#include "base/hit_path.h"

namespace dprobe::trace {
namespace {

// The character at `i`, or 0 past the end. The kernel's matchers work on
// NUL-terminated strings and their rules are stated in terms of that NUL
// (a trailing `\` matches the end of the string, a `[` class may not run
// into it); reading 0 past the end keeps those rules for counted strings.
DPROBE_HIT_PATH inline unsigned char char_at(const char* s, uint32_t length, uint32_t i) {
  return i < length ? static_cast<unsigned char>(s[i]) : 0;
}

DPROBE_HIT_PATH bool bytes_equal(const char* a, const char* b, uint32_t length) {
  for (uint32_t i = 0; i < length; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

DPROBE_HIT_PATH bool string_contains(FieldString text, const char* needle, uint32_t needle_length) {
  if (needle_length > text.length) return false;
  for (uint32_t start = 0; start + needle_length <= text.length; ++start) {
    if (bytes_equal(text.data + start, needle, needle_length)) return true;
  }
  return false;
}

struct ClassMatch {
  bool malformed;  // no closing ']': the '[' is an ordinary character
  bool matched;
  uint32_t next;  // the pattern index after the closing ']'
};

// A `[...]` class whose first character is pattern[p], tested against c.
// As lib/glob.c: `!` first inverts, the first span may be `]`, `a-z` is a
// range unless the `-` is followed by `]`.
DPROBE_HIT_PATH ClassMatch match_class(const char* pattern, uint32_t length, uint32_t p,
                                       unsigned char c) {
  const bool inverted = char_at(pattern, length, p) == '!';
  if (inverted) ++p;
  bool in_class = false;
  unsigned char low = char_at(pattern, length, p++);
  do {
    if (low == 0) return {true, false, 0};
    unsigned char high = low;
    if (char_at(pattern, length, p) == '-' && char_at(pattern, length, p + 1) != ']') {
      high = char_at(pattern, length, p + 1);
      if (high == 0) return {true, false, 0};
      p += 2;
    }
    if (low <= c && c <= high) in_class = true;
    low = char_at(pattern, length, p++);
  } while (low != ']');
  return {false, in_class != inverted, p};
}

DPROBE_HIT_PATH bool test_string(const FilterProgram& program, const FilterStep& step,
                                 const HitFields& hit) {
  if (step.str_offset > program.strings.size() ||
      step.str_length > program.strings.size() - step.str_offset) {
    return false;
  }
  const char* pattern = program.strings.data() + step.str_offset;
  const uint32_t length = step.str_length;
  const FieldString text = read_string_at(step.source, step.offset, hit);
  switch (step.op) {
    case FilterOp::kStringEqual:
      return text.length == length && bytes_equal(text.data, pattern, length);
    case FilterOp::kStringPrefix:
      return text.length >= length && bytes_equal(text.data, pattern, length);
    case FilterOp::kStringSuffix:
      // The kernel compares a comm's suffix against all 16 bytes of the
      // name (so "*sh" never matches "bash"); this is the name's suffix.
      return text.length >= length &&
             bytes_equal(text.data + (text.length - length), pattern, length);
    case FilterOp::kStringContains:
      return string_contains(text, pattern, length);
    case FilterOp::kStringGlob:
      return filter_glob_match(pattern, length, text.data, text.length);
    default:
      return false;
  }
}

template <typename T>
DPROBE_HIT_PATH bool compare_ordered(T field, T value, FilterOp op) {
  switch (op) {
    case FilterOp::kLess:
      return field < value;
    case FilterOp::kLessEqual:
      return field <= value;
    case FilterOp::kGreater:
      return field > value;
    case FilterOp::kGreaterEqual:
      return field >= value;
    default:
      return false;
  }
}

DPROBE_HIT_PATH bool test_number(const FilterStep& step, const HitFields& hit) {
  // Both sides are extended the same way from the field's size, so the
  // 64-bit comparison is the field-sized one the kernel makes.
  const uint64_t value = read_number_at(step.source, step.offset, step.size, step.is_signed, hit);
  switch (step.op) {
    case FilterOp::kEqual:
      return value == step.value;
    case FilterOp::kBitsSet:
      return (value & step.value) != 0;
    default:
      break;
  }
  if (step.is_signed) {
    return compare_ordered(static_cast<int64_t>(value), static_cast<int64_t>(step.value), step.op);
  }
  return compare_ordered(value, step.value, step.op);
}

DPROBE_HIT_PATH bool is_string_op(FilterOp op) {
  return op >= FilterOp::kStringEqual && op < FilterOp::kCount;
}

// A predicate whose operation does not fit its field's kind never holds.
[[gnu::always_inline]] DPROBE_HIT_PATH inline bool test_step(const FilterProgram& program,
                                                             const FilterStep& step,
                                                             const HitFields& hit) {
  const bool string_field =
      step.source == FieldSource::kString || step.source == FieldSource::kComm;
  if (is_string_op(step.op) != string_field) return false;
  if (string_field) return test_string(program, step, hit);
  return test_number(step, hit);
}

DPROBE_HIT_PATH FilterStep step_of(const FilterProgram& program, const FilterInsn& insn) {
  FilterStep step;
  step.value = insn.value;
  step.str_offset = insn.str_offset;
  step.str_length = insn.str_length;
  step.on_true = insn.on_true;
  step.on_false = insn.on_false;
  step.op = insn.op;
  if (insn.field >= program.fields.size()) {
    step.op = FilterOp::kCount;  // fits no field: never holds
    return step;
  }
  const RecordField& field = program.fields[insn.field];
  step.offset = field.offset;
  step.source = field.source;
  step.size = field.size;
  step.is_signed = field.is_signed;
  return step;
}

// Runs the program, each step from `step(i)`.
template <typename StepAt>
DPROBE_HIT_PATH bool run(const FilterProgram& program, StepAt step_at, const HitFields& hit) {
  const size_t n = program.code.size();
  size_t i = 0;
  while (i < n) {
    const FilterStep step = step_at(i);
    const size_t next = test_step(program, step, hit) ? step.on_true : step.on_false;
    // Jumps only go forward, so the loop ends; a program that breaks that
    // (refused by filter_program_valid) keeps the hit rather than lose it.
    if (next <= i) return true;
    i = next;
  }
  return i == n;
}

}  // namespace

DPROBE_HIT_PATH bool filter_glob_match(const char* pattern, uint32_t pattern_length,
                                       const char* text, uint32_t text_length) noexcept {
  uint32_t p = 0;
  uint32_t t = 0;
  // The last `*` seen: on a mismatch, it swallows one more character of
  // the text and matching resumes after it. One such point is enough for
  // globs (a later `*` supersedes an earlier one), so no recursion.
  bool starred = false;
  uint32_t star_p = 0;
  uint32_t star_t = 0;
  for (;;) {
    const unsigned char c = char_at(text, text_length, t++);
    unsigned char d = char_at(pattern, pattern_length, p++);
    if (d == '*') {
      if (p >= pattern_length) return true;  // a trailing `*` takes the rest
      starred = true;
      star_p = p;
      star_t = --t;  // it may match nothing: try this character again
      continue;
    }
    bool same;
    if (d == '?') {
      if (c == 0) return false;
      same = true;
    } else if (const ClassMatch klass = d == '[' ? match_class(pattern, pattern_length, p, c)
                                                 : ClassMatch{true, false, 0};
               !klass.malformed) {
      same = klass.matched;
      if (same) p = klass.next;
    } else {
      if (d == '\\') d = char_at(pattern, pattern_length, p++);  // a trailing one reads the end
      if (c == d && d == 0) return true;
      same = c == d;
    }
    if (same) continue;
    if (c == 0 || !starred) return false;
    p = star_p;
    t = ++star_t;
  }
}

bool filter_program_valid(const FilterProgram& program) {
  const size_t n = program.code.size();
  if (n > kMaxFilterPredicates) return false;
  for (size_t i = 0; i < n; ++i) {
    const FilterInsn& insn = program.code[i];
    if (insn.op >= FilterOp::kCount || insn.field >= program.fields.size()) return false;
    if (is_string_op(insn.op) != program.fields[insn.field].is_string()) return false;
    if (is_string_op(insn.op) && (insn.str_offset > program.strings.size() ||
                                  insn.str_length > program.strings.size() - insn.str_offset)) {
      return false;
    }
    const auto forward = [&](size_t target) { return target > i && target <= n + 1; };
    if (!forward(insn.on_true) || !forward(insn.on_false)) return false;
  }
  return true;
}

std::vector<FilterStep> plan_filter(const FilterProgram& program) {
  std::vector<FilterStep> steps;
  steps.reserve(program.code.size());
  for (const FilterInsn& insn : program.code) steps.push_back(step_of(program, insn));
  return steps;
}

DPROBE_HIT_PATH bool filter_matches(const FilterProgram& program, const FilterStep* steps,
                                    const HitFields& hit) noexcept {
  return run(
      program, [steps](size_t i) -> const FilterStep& { return steps[i]; }, hit);
}

DPROBE_HIT_PATH bool filter_matches(const FilterProgram& program, const HitFields& hit) noexcept {
  return run(
      program, [&](size_t i) { return step_of(program, program.code[i]); }, hit);
}

}  // namespace dprobe::trace
