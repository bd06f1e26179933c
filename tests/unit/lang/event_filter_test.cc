// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The filter compiler: the programs it makes, what they decide on a
// record, and its errors with their columns. The columns and messages are
// the ones Linux 6.18's error_log gives for the same filter on a uprobe
// event with the same fields, except where marked as dprobe's own.
#include "lang/event_filter.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event.h"
#include "trace/hit/event_filter.h"
#include "trace/record.h"
#include "trace/record_fields.h"

namespace dprobe::lang {
namespace {

using trace::FilterOp;
using trace::FilterProgram;

// An event with a field of every number size, a hex one and a string.
trace::EventDesc test_event(bool is_return = false) {
  trace::EventDesc event;
  event.is_return = is_return;
  const std::pair<const char*, const char*> args[] = {
      {"a8", "u8"},   {"s8", "s8"},   {"a16", "u16"}, {"s16", "s16"}, {"a32", "u32"},
      {"s32", "s32"}, {"a64", "u64"}, {"s64", "s64"}, {"x", "x32"},   {"str", "string"}};
  for (const auto& [name, type] : args) {
    trace::EventArg arg;
    arg.name = name;
    arg.type = trace::find_fetch_type(type)->id;
    event.args.push_back(arg);
  }
  trace::layout_event(event);
  return event;
}

const std::vector<trace::RecordField>& fields() {
  static const auto* const fields = new std::vector(trace::record_fields(test_event()));
  return *fields;
}

Result<FilterProgram, FilterError> compile(std::string_view text) {
  return compile_filter(text, fields());
}

// One record of test_event(): a8=5 s8=-3 a16=1000 s16=-1000 a32=70000
// s32=-70000 a64=2^40 s64=-2^40 x=0x10 str="hello.txt", by thread 1234
// (common_pid: the kernel's task pid) of process 1200 on CPU 3, in
// thread "python3".
class Record {
 public:
  Record() : event_(test_event()), bytes_(event_.fixed_size + 32) {
    trace::store_field<uint32_t>(bytes_.data(), offsetof(trace::RecordHeader, pid), 1200);
    trace::store_field<uint32_t>(bytes_.data(), offsetof(trace::RecordHeader, tid), 1234);
    trace::store_field<uint32_t>(bytes_.data(), offsetof(trace::RecordHeader, cpu), 3);
    set<uint8_t>(0, 5);
    set<int8_t>(1, -3);
    set<uint16_t>(2, 1000);
    set<int16_t>(3, -1000);
    set<uint32_t>(4, 70000);
    set<int32_t>(5, -70000);
    set<uint64_t>(6, uint64_t{1} << 40);
    set<int64_t>(7, -(int64_t{1} << 40));
    set<uint32_t>(8, 0x10);
    const std::string_view text = "hello.txt";
    std::memcpy(bytes_.data() + event_.fixed_size, text.data(), text.size());
    set<uint32_t>(9,
                  trace::make_data_loc(event_.fixed_size, static_cast<uint32_t>(text.size() + 1)));
  }

  bool passes(const FilterProgram& program) const {
    return trace::filter_matches(program, {bytes_.data(), "python3", 0});
  }

 private:
  template <typename T>
  void set(size_t arg, T value) {
    trace::store_field(bytes_.data(), event_.args[arg].offset, value);
  }

  trace::EventDesc event_;
  std::vector<std::byte> bytes_;
};

TEST(FilterCompile, EmptyAndZeroMeanNoFilter) {
  for (std::string_view text : {"", "0", "  0 "}) {
    auto program = compile(text);
    ASSERT_TRUE(program) << program.error().message;
    EXPECT_TRUE(program->empty());
    EXPECT_EQ(program->text, text);
  }
}

TEST(FilterCompile, OnePredicate) {
  auto program = compile("a8 == 1");
  ASSERT_TRUE(program);
  ASSERT_EQ(program->code.size(), 1u);
  EXPECT_EQ(program->code[0].op, FilterOp::kEqual);
  EXPECT_EQ(program->code[0].value, 1u);
  EXPECT_EQ(program->code[0].on_true, 1);   // pass
  EXPECT_EQ(program->code[0].on_false, 2);  // drop
  ASSERT_EQ(program->fields.size(), 1u);
  EXPECT_EQ(program->fields[0].name, "a8");
  EXPECT_EQ(program->text, "a8 == 1");
  EXPECT_TRUE(trace::filter_program_valid(*program));
}

TEST(FilterCompile, NotEqualSwapsTheJumps) {
  auto program = compile("a8 != 1");
  ASSERT_TRUE(program);
  EXPECT_EQ(program->code[0].op, FilterOp::kEqual);
  EXPECT_EQ(program->code[0].on_true, 2);
  EXPECT_EQ(program->code[0].on_false, 1);
}

TEST(FilterCompile, OrAndAndShortCircuit) {
  auto either = compile("a8 == 1 || a8 == 2");
  ASSERT_TRUE(either);
  ASSERT_EQ(either->code.size(), 2u);
  EXPECT_EQ(either->fields.size(), 1u);  // one field, read by both
  EXPECT_EQ(either->code[0].on_true, 2);
  EXPECT_EQ(either->code[0].on_false, 1);
  EXPECT_EQ(either->code[1].on_true, 2);
  EXPECT_EQ(either->code[1].on_false, 3);

  auto both = compile("a8 == 1 && s8 == 2");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->fields.size(), 2u);
  EXPECT_EQ(both->code[0].on_true, 1);
  EXPECT_EQ(both->code[0].on_false, 3);
  EXPECT_EQ(both->code[1].on_true, 2);
  EXPECT_EQ(both->code[1].on_false, 3);
}

// Values are parsed as kstrtoull (kstrtoll for signed fields) with base 0,
// then cut to the field's size and extended as the field is.
TEST(FilterCompile, NumbersTakeTheFieldsType) {
  struct Case {
    std::string_view text;
    uint64_t value;
  };
  const Case cases[] = {
      {"a16 == 0x10", 16},
      {"a16 == 0X10", 16},
      {"a16 == 010", 8},
      {"a16 == 0", 0},
      {"a8 == 256", 0},
      {"s8 == -1", ~uint64_t{0}},
      {"s8 == 200", static_cast<uint64_t>(int64_t{-56})},
      {"s16 == -0x10", static_cast<uint64_t>(int64_t{-16})},
      {"a64 == 18446744073709551615", ~uint64_t{0}},
      {"s64 == -9223372036854775808", uint64_t{1} << 63},
      {"common_pid == -1", ~uint64_t{0}},
  };
  for (const Case& c : cases) {
    auto program = compile(c.text);
    ASSERT_TRUE(program) << c.text << ": " << program.error().message;
    EXPECT_EQ(program->code[0].value, c.value) << c.text;
  }
}

struct GlobCase {
  std::string_view filter;
  FilterOp op;
  std::string_view pattern;
  bool negated;
};

// The kernel's filter_parse_regex classes.
constexpr GlobCase kGlobCases[] = {
    {R"(str ~ "abc")", FilterOp::kStringEqual, "abc", false},
    {R"(str ~ "abc*")", FilterOp::kStringPrefix, "abc", false},
    {R"(str ~ "*abc")", FilterOp::kStringSuffix, "abc", false},
    {R"(str ~ "*abc*")", FilterOp::kStringContains, "abc", false},
    {R"(str ~ "*")", FilterOp::kStringSuffix, "", false},
    {R"(str ~ "**")", FilterOp::kStringContains, "", false},
    {R"(str ~ "a*c")", FilterOp::kStringGlob, "a*c", false},
    {R"(str ~ "*a?")", FilterOp::kStringGlob, "*a?", false},
    {R"(str ~ "[ab]c*")", FilterOp::kStringGlob, "[ab]c*", false},
    {R"(str ~ "a\*")", FilterOp::kStringGlob, R"(a\*)", false},
    {R"(str ~ "!abc*")", FilterOp::kStringPrefix, "abc", true},
    {R"(str ~ "!")", FilterOp::kStringEqual, "", true},
    {R"(str ~ "1*")", FilterOp::kStringEqual, "1*", false},  // the kernel's MATCH_INDEX
    {R"(str ~ '')", FilterOp::kStringEqual, "", false},
    {R"(str == "abc*")", FilterOp::kStringEqual, "abc*", false},  // == is never a glob
    {R"(str != "!abc")", FilterOp::kStringEqual, "!abc", true},
    {R"(comm ~ "py*")", FilterOp::kStringPrefix, "py", false},
};

TEST(FilterCompile, GlobsAreClassifiedOnce) {
  for (const GlobCase& c : kGlobCases) {
    auto program = compile(c.filter);
    ASSERT_TRUE(program) << c.filter << ": " << program.error().message;
    const trace::FilterInsn& insn = program->code[0];
    EXPECT_EQ(insn.op, c.op) << c.filter;
    EXPECT_EQ(std::string_view(program->strings).substr(insn.str_offset, insn.str_length),
              c.pattern)
        << c.filter;
    EXPECT_EQ(insn.on_true == 2, c.negated) << c.filter;
  }
}

TEST(FilterCompile, DurationOnReturnEventsOnly) {
  auto program = compile_filter("$duration > 1000000", trace::record_fields(test_event(true)));
  ASSERT_TRUE(program) << program.error().message;
  EXPECT_EQ(program->fields[0].source, trace::FieldSource::kDuration);
  EXPECT_TRUE(trace::filter_matches(*program, {nullptr, "", 2000000}));
  EXPECT_FALSE(trace::filter_matches(*program, {nullptr, "", 1000}));

  auto entry = compile("$duration > 1000000");
  ASSERT_FALSE(entry);
  EXPECT_EQ(entry.error().message, "Field not found");
  EXPECT_EQ(entry.error().column, 10u);
}

struct Decision {
  std::string_view filter;
  bool passes;
};

constexpr Decision kDecisions[] = {
    // Every number operation, on every size, signed and not.
    {"a8 == 5", true},
    {"a8 != 5", false},
    {"a8 < 6", true},
    {"a8 < 5", false},
    {"a8 <= 5", true},
    {"a8 > 5", false},
    {"a8 > 4", true},
    {"a8 >= 5", true},
    {"a8 >= 6", false},
    {"a8 & 4", true},
    {"a8 & 2", false},
    {"a8 == 261", true},  // cut to the u8: 5
    {"s8 == -3", true},
    {"s8 < 0", true},
    {"s8 > -4", true},
    {"s8 == 253", true},  // (s8)253 is -3
    {"a16 == 0x3e8", true},
    {"a16 == 01750", true},
    {"s16 < -999", true},
    {"s16 >= -999", false},
    {"a32 > 65535", true},
    {"s32 == -70000", true},
    {"s32 > 0", false},
    {"a64 == 0x10000000000", true},
    {"s64 < -1099511627775", true},
    {"s64 < 0", true},
    {"x == 16", true},
    {"common_pid == 1234", true},
    {"cpu == 3", true},
    {"CPU != 3", false},
    {"common_cpu >= 3", true},
    // Strings, quoted either way, and the thread's name.
    {R"(str == "hello.txt")", true},
    {"str == 'hello.txt'", true},
    {R"(str != "hello.txt")", false},
    {R"(str == "hello")", false},
    {R"(str ~ "hello")", false},
    {R"(str ~ "hello*")", true},
    {R"(str ~ "*.txt")", true},
    {R"(str ~ "*lo.t*")", true},
    {R"(str ~ "h?llo.[st]xt")", true},
    {R"(str ~ "!*.txt")", false},
    {R"(str ~ "!*.log")", true},
    {R"(comm == "python3")", true},
    {R"(COMM ~ "py*")", true},
    // The kernel tests a comm's suffix against all 16 bytes of the name, so
    // "*thon3" never matches there; dprobe tests the name's suffix.
    {R"(comm ~ "*thon3")", true},
    // && binds tighter than ||, whichever comes first.
    {"a8 == 5 || a8 == 1 && a8 == 2", true},
    {"a8 == 1 && a8 == 2 || a8 == 5", true},
    {"(a8 == 5 || a8 == 1) && a8 == 2", false},
    {"a8 == 1 && (a8 == 2 || a8 == 5)", false},
    {"a8 == 5 && (s8 == -3 && (a16 == 1000 || str ~ \"x*\"))", true},
    // ! applies to the predicate or group after it.
    {"!a8 == 5", false},
    {"!a8 == 1 && s8 == -3", true},
    {"!(a8 == 5)", false},
    {"!!(a8 == 5)", true},
    {"! ( ! a8 == 1 )", false},
    {"!(a8 == 1 || a8 == 5)", false},
    {"!(a8 == 1 && a8 == 5)", true},
    {"!(!(a8 == 5) || !(s8 == -3))", true},
    {"!(a8 == 1 || !(s8 == -3 && !(str ~ \"*.log\")))", true},
    // A dangling && or || at the end is dropped, as the kernel does.
    {"a8 == 5 &&", true},
    {"a8 == 1 ||", false},
    {"a8 == 5 && !", true},
};

TEST(FilterCompile, DecidesAsTheKernel) {
  const Record record;
  for (const Decision& d : kDecisions) {
    auto program = compile(d.filter);
    ASSERT_TRUE(program) << d.filter << ": " << program.error().message;
    ASSERT_TRUE(trace::filter_program_valid(*program)) << d.filter;
    EXPECT_EQ(record.passes(*program), d.passes) << d.filter;
  }
}

// Nesting is the user's to choose: nothing recurses on it.
TEST(FilterCompile, DeepNestingNeedsNoRecursion) {
  const Record record;
  const std::string deep = std::string(5000, '(') + "a8 == 5" + std::string(5000, ')');
  auto nested = compile(deep);
  ASSERT_TRUE(nested) << nested.error().message;
  EXPECT_TRUE(record.passes(*nested));

  auto odd_nots = compile(std::string(5001, '!') + "a8 == 5");
  ASSERT_TRUE(odd_nots);
  EXPECT_FALSE(record.passes(*odd_nots));

  std::string not_groups;
  for (int i = 0; i < 3000; ++i) not_groups += "!(";
  not_groups += "a8 == 5" + std::string(3000, ')');
  auto even_nots = compile(not_groups);
  ASSERT_TRUE(even_nots);
  EXPECT_TRUE(record.passes(*even_nots));
}

TEST(FilterCompile, PredicateCountIsBounded) {
  std::string text = "a8 == 1";
  for (uint32_t i = 1; i < trace::kMaxFilterPredicates; ++i) text += " || a8 == 1";
  auto largest = compile(text);
  ASSERT_TRUE(largest) << largest.error().message;
  EXPECT_EQ(largest->code.size(), trace::kMaxFilterPredicates);

  const size_t one_more = text.size() + 4;
  auto too_many = compile(text + " || a8 == 1");
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.error().message, "Too many terms in predicate expression");
  EXPECT_EQ(too_many.error().column, one_more);
}

TEST(FilterCompile, StringOperandIsBounded) {
  const std::string longest = "str == \"" + std::string(255, 'a') + "\"";
  EXPECT_TRUE(compile(longest));
  const std::string too_long = "str == \"" + std::string(256, 'a') + "\"";
  auto error = compile(too_long);
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().message, "Operand too long");
  EXPECT_EQ(error.error().column, too_long.size());
}

struct CaretCase {
  std::string_view filter;
  std::string_view caret;  // spaces, then '^' where the kernel's error_log points
  std::string_view message;
};

// clang-format off
constexpr CaretCase kCaretCases[] = {
    {"foo == 1",
     "    ^", "Field not found"},
    {"  foo == 1",
     "      ^", "Field not found"},
    {"a8 == 1 && (a8 == 2 || foo == 3)",
     "                           ^", "Field not found"},
    {"a8 = 1",
     "    ^", "Invalid operator"},
    {"a8 !~ 1",
     "    ^", "Invalid operator"},
    {"a8",
     "   ^", "Invalid operator"},
    {"(a8 == 1",
     "^", "Too many '('"},
    {"(((a8 == 1)",
     " ^", "Too many '('"},
    {"a8 == 1 && (a8 == 2",
     "           ^", "Too many '('"},
    {R"(str == "(" && (a8 == 1)",
     "              ^", "Too many '('"},
    {"a8 == 1)",
     "       ^", "Too few '('"},
    {"(a8 == 1))",
     "         ^", "Too few '('"},
    {R"(str == "a)",
     "       ^", "Missing matching quote"},
    {R"(str == "a"b")",
     "           ^", "Missing matching quote"},
    {R"((str == "a)",  // quotes are checked before parentheses
     "        ^", "Missing matching quote"},
    {"a8 == 1234567890123456789012345",
     "                                ^", "Operand too long"},
    {"comm == 1",
     "         ^", "Expecting string field"},
    {"str < 1",
     "       ^", "Expecting string field"},
    {R"(a8 == "1")",
     "       ^", "Expecting numeric field"},
    {R"(a8 ~ "x")",
     "      ^", "Expecting numeric field"},
    {R"(comm < "a")",
     "        ^", "Illegal operation for field type"},
    {R"(str & "x")",
     "       ^", "Illegal operation for field type"},
    {"a8 ~ 1",
     "      ^", "Illegal operation for field type"},
    {"a8 == -1",
     "       ^", "Illegal integer value"},
    {"a8 == 08",
     "       ^", "Illegal integer value"},
    {"a8 == 0x",
     "       ^", "Illegal integer value"},
    {"a8 == 1a",
     "       ^", "Illegal integer value"},
    {"s8 == -",
     "       ^", "Illegal integer value"},
    {"a64 == 18446744073709551616",
     "        ^", "Illegal integer value"},
    {"s64 == 9223372036854775808",
     "        ^", "Illegal integer value"},
    {"s64 == -9223372036854775809",
     "        ^", "Illegal integer value"},
    {"a8 == 1 a8 == 2",
     "        ^", "Too many terms in predicate expression"},
    {"a8 == 1 & a8 == 2",
     "        ^", "Too many terms in predicate expression"},
    {"a8 == 1.5",
     "       ^", "Too many terms in predicate expression"},
    {"(a8 == 1) (a8 == 2)",
     "          ^", "Too many terms in predicate expression"},
    {"comm == bash",
     "         ^", "Invalid value (did you forget quotes)?"},
    {"a8 == +1",
     "       ^", "Invalid value (did you forget quotes)?"},
    {"a8 && 3",
     "     ^", "Invalid value (did you forget quotes)?"},
    {"a8 ==   ",
     "      ^", "Invalid value (did you forget quotes)?"},
    {"!",
     " ^", "No filter found"},
    {"!!",
     "  ^", "No filter found"},
    // dprobe's own: the kernel logs these as "Error" at column 0.
    {"()",
     "^", "No filter found"},
    {"   ",
     "^", "No filter found"},
    {"a8 == 1 && && a8 == 2",
     "            ^", "Missing field name and/or value"},
    {"(!)",
     "   ^", "Missing field name and/or value"},
    {"== 1",
     " ^", "Missing field name and/or value"},
    // Not supported: .function (the kernel resolves kernel symbols).
    {"a8.function == 1",
     "   ^", "Invalid operator"},
};
// clang-format on

TEST(FilterCompile, ErrorsPointWhereTheKernelPoints) {
  for (const CaretCase& c : kCaretCases) {
    auto program = compile(c.filter);
    ASSERT_FALSE(program) << c.filter;
    EXPECT_EQ(program.error().message, c.message) << c.filter;
    EXPECT_EQ(program.error().column, c.caret.find('^')) << c.filter;
  }
}

}  // namespace
}  // namespace dprobe::lang
