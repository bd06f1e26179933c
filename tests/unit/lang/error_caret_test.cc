// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>

#include "lang/definition.h"
#include "unit/lang/caret_cases.h"

namespace dprobe::lang {
namespace {

using test::CaretCase;
using test::kParseCaretCases;

class ParseCaretTest : public ::testing::TestWithParam<CaretCase> {};

TEST_P(ParseCaretTest, ReportsCodeAndColumn) {
  const CaretCase& c = GetParam();
  auto def = parse_definition(c.definition);
  ASSERT_FALSE(def) << c.definition;
  EXPECT_EQ(error_name(def.error().code), error_name(c.code)) << c.definition;
  EXPECT_EQ(def.error().column, c.caret.find('^')) << c.definition;
  EXPECT_EQ(def.error().command, c.definition);
}

INSTANTIATE_TEST_SUITE_P(Table, ParseCaretTest, ::testing::ValuesIn(kParseCaretCases),
                         [](const auto& info) {
                           return std::string(error_name(info.param.code)) + "_" +
                                  std::to_string(info.index);
                         });

// Definitions too long to draw with a caret.
TEST(ParseCaretLong, TooManyArgsPointsAtTheFirstArgument) {
  std::string line = "p:grp/ev libc.so.6:open";
  for (int i = 0; i < 129; ++i) line += " %di";
  auto def = parse_definition(line);
  ASSERT_FALSE(def);
  EXPECT_EQ(def.error().code, ErrorCode::TOO_MANY_ARGS);
  EXPECT_EQ(def.error().column, line.find("%di"));
}

TEST(ParseCaretLong, OneHundredTwentyEightArgumentsAreFine) {
  std::string line = "p:grp/ev libc.so.6:open";
  for (int i = 0; i < 128; ++i) line += " %di";
  auto def = parse_definition(line);
  ASSERT_TRUE(def) << render_error(def.error());
  EXPECT_EQ(def->spec.event.args.size(), 128u);
  EXPECT_EQ(def->spec.event.args.back().name, "arg128");
}

TEST(ParseCaretLong, EventTooBigPointsAtTheArgumentThatOverflows) {
  // Each u64[64] field takes 512 bytes; the 64th crosses the 32 KiB limit.
  std::string line = "p:grp/ev libc.so.6:open";
  size_t column_of_64th = 0;
  for (int i = 0; i < 64; ++i) {
    if (i == 63) column_of_64th = line.size() + 1;
    line += " a" + std::to_string(i) + "=+0(%di):u64[64]";
  }
  auto def = parse_definition(line);
  ASSERT_FALSE(def);
  EXPECT_EQ(def.error().code, ErrorCode::EVENT_TOO_BIG);
  EXPECT_EQ(def.error().column, column_of_64th);
}

TEST(RenderError, HasTheKernelErrorLogShape) {
  auto def = parse_definition("p:grp/ev libc.so.6:open fd=%zz");
  ASSERT_FALSE(def);
  EXPECT_EQ(render_error(def.error()),
            "dprobe: error: Invalid register name (BAD_REG_NAME)\n"
            "  Command: p:grp/ev libc.so.6:open fd=%zz\n"
            "                                      ^\n");
}

TEST(RenderError, ColumnsCountWordsJoinedBySingleSpaces) {
  auto def = parse_definition("  p:grp/ev\tlibc.so.6:open    fd=%zz  ");
  ASSERT_FALSE(def);
  EXPECT_EQ(def.error().command, "p:grp/ev libc.so.6:open fd=%zz");
  EXPECT_EQ(def.error().column, 27u);
}

TEST(RenderError, NamesTheOriginAndNotes) {
  ProbeError error{ErrorCode::NON_UNIQ_SYMBOL,     "p helper",    2, "",
                   {"helper@0x10", "helper@0x20"}, "probes.txt:3"};
  EXPECT_EQ(render_error(error),
            "dprobe: error: The symbol is not unique (NON_UNIQ_SYMBOL) at probes.txt:3\n"
            "  Command: p helper\n"
            "             ^\n"
            "    helper@0x10\n"
            "    helper@0x20\n");
}

}  // namespace
}  // namespace dprobe::lang
