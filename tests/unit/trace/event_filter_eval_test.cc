// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The filter interpreter on hand-made programs: each operation on each
// kind of field, the jumps, the checks of a program received from
// elsewhere, and the kernel's glob semantics.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "trace/hit/event_filter.h"
#include "trace/record.h"
#include "trace/record_fields.h"

namespace dprobe::trace {
namespace {

// filter_matches, run both ways: with the steps planned once (as the agent
// runs a filter) and worked out one by one; they must agree.
bool passes(const FilterProgram& program, const HitFields& hit) {
  const std::vector<FilterStep> steps = plan_filter(program);
  const bool planned = filter_matches(program, steps.data(), hit);
  EXPECT_EQ(planned, filter_matches(program, hit)) << program.text;
  return planned;
}

constexpr uint16_t kPass = 1;  // in a one-predicate program
constexpr uint16_t kDrop = 2;

RecordField number_field(uint32_t offset, uint8_t size, bool is_signed) {
  RecordField field;
  field.name = "n";
  field.offset = offset;
  field.size = size;
  field.is_signed = is_signed;
  return field;
}

RecordField special_field(std::string name, FieldSource source) {
  RecordField field;
  field.name = std::move(name);
  field.source = source;
  field.size = source == FieldSource::kString ? 4 : 8;
  return field;
}

FilterInsn insn(FilterOp op, uint16_t field, uint64_t value, uint16_t on_true, uint16_t on_false) {
  FilterInsn i;
  i.op = op;
  i.field = field;
  i.value = value;
  i.on_true = on_true;
  i.on_false = on_false;
  return i;
}

// A record with room for a few fields at 32.. and strings after 64.
class Hit {
 public:
  Hit() { std::memcpy(comm_, "python3", 8); }
  template <typename T>
  void set(uint32_t offset, T value) {
    store_field(bytes_.data(), offset, value);
  }
  void set_string(uint32_t offset, std::string_view text) {
    std::memcpy(bytes_.data() + next_string_, text.data(), text.size());
    bytes_[next_string_ + text.size()] = std::byte{0};
    const auto length = static_cast<uint32_t>(text.size() + 1);
    set(offset, make_data_loc(next_string_, length));
    next_string_ += length;
  }
  void set_faulted(uint32_t offset) { set(offset, make_data_loc(next_string_, 0)); }
  void set_comm(std::string_view name) {
    std::memset(comm_, 0, sizeof(comm_));
    std::memcpy(comm_, name.data(), name.size());
  }
  HitFields fields(uint64_t duration_ns = 0) const { return {bytes_.data(), comm_, duration_ns}; }

 private:
  std::array<std::byte, 512> bytes_{};
  char comm_[16];
  uint32_t next_string_ = 64;
};

// One predicate on one field.
FilterProgram single(RecordField field, FilterOp op, uint64_t value, std::string pattern = "") {
  FilterProgram program;
  program.fields.push_back(std::move(field));
  FilterInsn i = insn(op, 0, value, kPass, kDrop);
  i.str_length = static_cast<uint16_t>(pattern.size());
  program.strings = std::move(pattern);
  program.code.push_back(i);
  return program;
}

TEST(FilterEval, EmptyProgramPassesEveryHit) {
  Hit hit;
  EXPECT_TRUE(passes(FilterProgram{}, hit.fields()));
  EXPECT_TRUE(filter_program_valid(FilterProgram{}));
}

TEST(FilterEval, UnsignedNumberOperations) {
  Hit hit;
  hit.set<uint32_t>(32, 4096);
  const RecordField size = number_field(32, 4, false);
  struct Case {
    FilterOp op;
    uint64_t value;
    bool passes;
  };
  const Case cases[] = {
      {FilterOp::kEqual, 4096, true},          {FilterOp::kEqual, 4095, false},
      {FilterOp::kLess, 4097, true},           {FilterOp::kLess, 4096, false},
      {FilterOp::kLessEqual, 4096, true},      {FilterOp::kLessEqual, 4095, false},
      {FilterOp::kGreater, 4095, true},        {FilterOp::kGreater, 4096, false},
      {FilterOp::kGreaterEqual, 4096, true},   {FilterOp::kGreaterEqual, 4097, false},
      {FilterOp::kBitsSet, 0x1000, true},      {FilterOp::kBitsSet, 0x0fff, false},
      {FilterOp::kBitsSet, 0xffff0000, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(passes(single(size, c.op, c.value), hit.fields()), c.passes)
        << static_cast<int>(c.op) << " " << c.value;
  }
}

// Signed fields read sign-extended and compare signed; the same bytes in
// an unsigned field are a large number. The compiler gives a value
// extended the same way (-1 in an s8 comparison is all ones).
TEST(FilterEval, SignedAndUnsignedFieldsOfEverySize) {
  for (const uint8_t size : std::array<uint8_t, 4>{1, 2, 4, 8}) {
    Hit hit;
    hit.set<uint64_t>(32, ~uint64_t{0});  // -1 in every size
    const uint64_t minus_one = ~uint64_t{0};
    EXPECT_TRUE(passes(single(number_field(32, size, true), FilterOp::kLess, 0), hit.fields()))
        << int{size};
    EXPECT_TRUE(
        passes(single(number_field(32, size, true), FilterOp::kEqual, minus_one), hit.fields()))
        << int{size};
    EXPECT_FALSE(passes(single(number_field(32, size, false), FilterOp::kLess, 0), hit.fields()))
        << int{size};
    const uint64_t all_ones = size == 8 ? minus_one : (uint64_t{1} << (size * 8)) - 1;
    EXPECT_TRUE(
        passes(single(number_field(32, size, false), FilterOp::kEqual, all_ones), hit.fields()))
        << int{size};
    EXPECT_TRUE(passes(single(number_field(32, size, false), FilterOp::kGreater, 0), hit.fields()))
        << int{size};
  }
}

TEST(FilterEval, FieldsReadOnlyTheirOwnBytes) {
  Hit hit;
  hit.set<uint8_t>(32, 7);
  hit.set<uint8_t>(33, 0xff);  // the next field's byte
  EXPECT_TRUE(passes(single(number_field(32, 1, false), FilterOp::kEqual, 7), hit.fields()));
  EXPECT_TRUE(passes(single(number_field(33, 1, true), FilterOp::kLess, 0), hit.fields()));
}

TEST(FilterEval, DurationIsTheHitsNanoseconds) {
  Hit hit;
  const RecordField duration = special_field("$duration", FieldSource::kDuration);
  EXPECT_TRUE(passes(single(duration, FilterOp::kGreater, 1000000), hit.fields(2000000)));
  EXPECT_FALSE(passes(single(duration, FilterOp::kGreater, 1000000), hit.fields(999)));
}

struct StringCase {
  FilterOp op;
  std::string pattern;
  bool passes;
};

TEST(FilterEval, StringOperationsOnARecordString) {
  Hit hit;
  hit.set_string(40, "/etc/passwd");
  RecordField path = special_field("path", FieldSource::kString);
  path.offset = 40;
  const StringCase cases[] = {
      {FilterOp::kStringEqual, "/etc/passwd", true},
      {FilterOp::kStringEqual, "/etc/passw", false},
      {FilterOp::kStringEqual, "/etc/passwd2", false},
      {FilterOp::kStringPrefix, "/etc/", true},
      {FilterOp::kStringPrefix, "/usr/", false},
      {FilterOp::kStringSuffix, "passwd", true},
      {FilterOp::kStringSuffix, "/etc", false},
      {FilterOp::kStringContains, "c/pa", true},
      {FilterOp::kStringContains, "shadow", false},
      {FilterOp::kStringContains, "", true},
      {FilterOp::kStringGlob, "/e?c/*wd", true},
      {FilterOp::kStringGlob, "/e?c/*wx", false},
  };
  for (const StringCase& c : cases) {
    EXPECT_EQ(passes(single(path, c.op, 0, c.pattern), hit.fields()), c.passes) << c.pattern;
  }
}

// A string the fetch could not read has length 0 in its __data_loc: it
// compares as the empty string.
TEST(FilterEval, FaultedStringIsEmpty) {
  Hit hit;
  hit.set_faulted(40);
  RecordField path = special_field("path", FieldSource::kString);
  path.offset = 40;
  EXPECT_TRUE(passes(single(path, FilterOp::kStringEqual, 0, ""), hit.fields()));
  EXPECT_FALSE(passes(single(path, FilterOp::kStringEqual, 0, "x"), hit.fields()));
  EXPECT_FALSE(passes(single(path, FilterOp::kStringPrefix, 0, "x"), hit.fields()));
  EXPECT_TRUE(passes(single(path, FilterOp::kStringGlob, 0, "*"), hit.fields()));
}

TEST(FilterEval, CommIsTheThreadsName) {
  Hit hit;
  const RecordField comm = special_field("comm", FieldSource::kComm);
  const StringCase cases[] = {
      {FilterOp::kStringEqual, "python3", true},
      {FilterOp::kStringEqual, "python", false},
      {FilterOp::kStringPrefix, "py", true},
      {FilterOp::kStringContains, "tho", true},
      // The kernel's suffix test of comm looks at all 16 bytes and fails;
      // this one is the name's suffix.
      {FilterOp::kStringSuffix, "thon3", true},
      {FilterOp::kStringGlob, "p[x-z]th*", true},
  };
  for (const StringCase& c : cases) {
    EXPECT_EQ(passes(single(comm, c.op, 0, c.pattern), hit.fields()), c.passes) << c.pattern;
  }
  hit.set_comm("0123456789abcdef");  // 16 bytes, no NUL
  EXPECT_TRUE(passes(single(comm, FilterOp::kStringEqual, 0, "0123456789abcdef"), hit.fields()));
}

TEST(FilterEval, NumberOperationOnAStringFieldFails) {
  Hit hit;
  const RecordField comm = special_field("comm", FieldSource::kComm);
  EXPECT_FALSE(passes(single(comm, FilterOp::kEqual, 0), hit.fields()));
  EXPECT_FALSE(filter_program_valid(single(comm, FilterOp::kEqual, 0)));
}

// a == 1 || (b == 2 && c == 3), as the compiler lays it out: the first
// predicate jumps past the others when true.
FilterProgram or_and_program() {
  FilterProgram program;
  program.fields = {number_field(32, 1, false), number_field(33, 1, false),
                    number_field(34, 1, false)};
  program.code = {insn(FilterOp::kEqual, 0, 1, 3, 1), insn(FilterOp::kEqual, 1, 2, 2, 4),
                  insn(FilterOp::kEqual, 2, 3, 3, 4)};
  return program;
}

TEST(FilterEval, JumpsShortCircuit) {
  const FilterProgram program = or_and_program();
  ASSERT_TRUE(filter_program_valid(program));
  struct Case {
    uint8_t a, b, c;
    bool passes;
  };
  for (const Case& c : {Case{1, 0, 0, true}, Case{0, 2, 3, true}, Case{0, 2, 0, false},
                        Case{0, 0, 3, false}, Case{1, 2, 3, true}}) {
    Hit hit;
    hit.set(32, c.a);
    hit.set(33, c.b);
    hit.set(34, c.c);
    EXPECT_EQ(passes(program, hit.fields()), c.passes)
        << int{c.a} << " " << int{c.b} << " " << int{c.c};
  }
}

TEST(FilterEval, ValidityChecksEveryIndex) {
  FilterProgram backward = or_and_program();
  backward.code[1].on_false = 0;
  EXPECT_FALSE(filter_program_valid(backward));
  Hit hit;
  hit.set<uint8_t>(32, 0);
  EXPECT_TRUE(passes(backward, hit.fields()));  // ends, and keeps the hit

  FilterProgram past_end = or_and_program();
  past_end.code[2].on_true = 5;
  EXPECT_FALSE(filter_program_valid(past_end));

  FilterProgram bad_field = or_and_program();
  bad_field.code[0].field = 3;
  EXPECT_FALSE(filter_program_valid(bad_field));
  EXPECT_FALSE(passes(bad_field, hit.fields()));

  FilterProgram bad_op = or_and_program();
  bad_op.code[0].op = FilterOp::kCount;
  EXPECT_FALSE(filter_program_valid(bad_op));

  RecordField path = special_field("path", FieldSource::kString);
  FilterProgram bad_string = single(path, FilterOp::kStringEqual, 0, "abc");
  EXPECT_TRUE(filter_program_valid(bad_string));
  bad_string.code[0].str_offset = 2;
  EXPECT_FALSE(filter_program_valid(bad_string));
  EXPECT_FALSE(filter_program_valid(single(path, FilterOp::kLess, 0)));
}

TEST(FilterEval, InsnsCrossASocketAsBytes) {
  const FilterProgram program = or_and_program();
  std::vector<std::byte> wire(program.code.size() * sizeof(FilterInsn));
  std::memcpy(wire.data(), program.code.data(), wire.size());
  FilterProgram received = program;
  const std::vector<std::byte> garbage(wire.size(), std::byte{0xee});
  std::memcpy(received.code.data(), garbage.data(), garbage.size());
  std::memcpy(received.code.data(), wire.data(), wire.size());
  Hit hit;
  hit.set<uint8_t>(33, 2);
  hit.set<uint8_t>(34, 3);
  EXPECT_TRUE(passes(received, hit.fields()));
}

struct GlobCase {
  std::string_view pattern;
  std::string_view text;
  bool matches;
};

// lib/glob.c's rules. Every row with a text was checked against Linux
// 6.18: a uprobe's string argument filtered with `~ "PATTERN"`.
constexpr GlobCase kGlobCases[] = {
    {"*", "", true},
    {"*", "anything", true},
    {"?", "", false},
    {"?", "a", true},
    {"a?c", "abc", true},
    {"a?c", "ac", false},
    {"*/my[!a]rue", "./mytrue", true},
    {"*/my[]a]rue", "./mytrue", false},  // ']' first is a member
    {"[]a]b", "]b", true},
    {"b[a-z]sh", "bash", true},
    {"b[a-z]sh", "bAsh", false},
    {"[!a-c]x", "dx", true},
    {"[!a-c]x", "bx", false},
    {"a[--b]b", "a-b", true},
    {"[a-]x", "-x", true},  // '-' before ']' is a member
    {"a[b", "a[b", true},   // no ']': the '[' is literal
    {"a[b", "ab", false},
    {"a[b-", "a[b-", true},
    {"a\\*b", "a*b", true},
    {"a\\*b", "axb", false},
    {"a\\\\", "a\\", true},
    {"a\\", "a", true},  // a trailing '\' matches the end
    {"a\\", "ab", false},
    {"a*b*c", "aXbXc", true},
    {"a*b*c", "aXbX", false},
    {"*b?", "abc", true},
    {"*X*X*", "aXbXc", true},
    {"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
};

TEST(FilterGlob, KernelSemantics) {
  for (const GlobCase& c : kGlobCases) {
    EXPECT_EQ(filter_glob_match(c.pattern.data(), static_cast<uint32_t>(c.pattern.size()),
                                c.text.data(), static_cast<uint32_t>(c.text.size())),
              c.matches)
        << c.pattern << " ~ " << c.text;
  }
}

}  // namespace
}  // namespace dprobe::trace
