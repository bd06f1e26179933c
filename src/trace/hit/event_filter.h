// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// An event filter, compiled: the kernel's `filter` file expression
// (`size > 4096 && comm ~ "py*"`) as a flat list of predicates, each with
// where to go next when it is true and when it is false, the way the
// kernel's filter `prog` array short-circuits && and ||. The language
// compiles the text (lang/event_filter.h); the agent runs the program on
// every hit, right after the fetch, and keeps the hit only if it passes.
//
//   FilterProgram program = *lang::compile_filter("size > 4096", fields);
//   HitFields hit{record, comm, duration_ns};
//   if (!filter_matches(program, hit)) ++filtered;  // drop the record
#ifndef DPROBE_TRACE_EVENT_FILTER_H_
#define DPROBE_TRACE_EVENT_FILTER_H_

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "trace/record_fields.h"

namespace dprobe::trace {

// What one predicate tests. Negations (`!=`, `!`, a `~ "!pattern"`) are
// not operations: the compiler swaps the predicate's two jump targets.
enum class FilterOp : uint8_t {
  // Number fields against `value` (truncated to the field's size and
  // extended as the field is, so 64-bit compares give the field's result).
  kEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kBitsSet,  // `&`: (field & value) != 0
  // String fields against the pattern in `strings`, classified when
  // compiled as the kernel's filter_parse_regex does.
  kStringEqual,     // == "abc", ~ "abc"
  kStringPrefix,    // ~ "abc*"
  kStringSuffix,    // ~ "*abc"
  kStringContains,  // ~ "*abc*"
  kStringGlob,      // ~ with ?, [...], \ or an inner *: the kernel's glob_match
  kCount
};

// One predicate and its branches. Plain bytes (no pointers, padding
// named and zeroed): programs cross the control socket as they are.
struct FilterInsn {
  uint64_t value = 0;       // the number compared with (number operations)
  uint32_t str_offset = 0;  // the pattern in FilterProgram::strings
  uint16_t str_length = 0;
  uint16_t field = 0;  // index in FilterProgram::fields
  // Where evaluation goes next: an index in `code` after this one, or
  // code.size() (the hit passes), or code.size() + 1 (it is filtered out).
  uint16_t on_true = 0;
  uint16_t on_false = 0;
  FilterOp op = FilterOp::kEqual;
  uint8_t reserved[3] = {};
};
static_assert(sizeof(FilterInsn) == 24);
static_assert(std::is_trivially_copyable_v<FilterInsn>);

// At most this many predicates in one filter (the kernel bounds its
// filters by the page its text is written with: a few hundred terms).
inline constexpr uint32_t kMaxFilterPredicates = 1024;

struct FilterProgram {
  std::vector<FilterInsn> code;     // empty: no filter, every hit passes
  std::vector<RecordField> fields;  // the fields the code reads, by index
  std::string strings;              // string constants / glob patterns, referenced by offset+length
  std::string text;                 // the filter as written, for messages
  bool empty() const { return code.empty(); }
};

// True when every index, offset and jump of `program` is in bounds, every
// jump goes forward and every operation fits its field's kind. The agent
// checks a program it receives once, before arming it.
bool filter_program_valid(const FilterProgram& program);

// One predicate with its field's place and shape copied in: what a hit
// reads, in one cache line, with no look-up through the field list.
struct FilterStep {
  uint64_t value = 0;
  uint32_t offset = 0;  // the field's, in the record
  uint32_t str_offset = 0;
  uint16_t str_length = 0;
  uint16_t on_true = 0;
  uint16_t on_false = 0;
  FilterOp op = FilterOp::kEqual;
  FieldSource source = FieldSource::kNumber;
  uint8_t size = 8;
  bool is_signed = false;
};

// A valid program's steps (filter_program_valid), worked out once: the
// agent's, when an event arrives.
std::vector<FilterStep> plan_filter(const FilterProgram& program);

// True when the hit passes. Runs in the agent on a hit, possibly inside a
// signal handler while the program is inside libc: no allocation, no libc
// call, no recursion; time bounded by the program's length (and, for a
// glob, the pattern's length times the string's). `steps` is
// plan_filter(program); the second form works them out one by one.
bool filter_matches(const FilterProgram& program, const FilterStep* steps,
                    const HitFields& hit) noexcept;
bool filter_matches(const FilterProgram& program, const HitFields& hit) noexcept;

// The kernel's glob_match (lib/glob.c) semantics: `*`, `?`, `[a-z]`,
// `[!a-z]`, `\` escapes; a malformed class matches its `[` literally.
// Exposed for tests. No libc, no recursion.
bool filter_glob_match(const char* pattern, uint32_t pattern_length, const char* text,
                       uint32_t text_length) noexcept;

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_EVENT_FILTER_H_
