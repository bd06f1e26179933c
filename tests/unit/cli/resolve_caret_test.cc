// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The errors found after parsing, when a definition meets the ELF objects it
// names and the definitions before it: each reported by load_definitions in
// the error_log shape, the caret under the word (OBJ, SYM or EVENT) at fault.
// Then the rule that keeps the error table honest: every code has a caret
// test somewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "cli/plan/definitions.h"
#include "lang/error_table.h"
#include "unit/cli/cli_test_support.h"
#include "unit/lang/caret_cases.h"
#include "unit/symbols/fixture_build.h"

namespace dprobe::cli {
namespace {

using lang::error_message;
using lang::error_name;
using lang::ErrorCode;
using symbols::test_support::fixture;
using test_support::count_errors;
using test_support::error_head;
using test_support::split_lines;

struct ResolveCaretCase {
  std::string_view definition;
  std::string_view caret;  // spaces, then '^' under the offending character
  ErrorCode code;
  std::string_view earlier = {};  // a definition loaded before this one, if any
};

// Names the case in test listings by its definition, not its bytes.
void PrintTo(const ResolveCaretCase& c, std::ostream* os) { *os << c.definition; }

// Placeholders for paths known only at run time; a caret after one moves by
// the length the substitution adds.
//   {FIX}   the symbols fixture's libfix.so.1.0 (two static helper()s, data_function)
//   {SDT}   the symbols fixture's sdt program (its SDT points, gcc's operands)
//   {DATA}  tests/unit/cli/data
// clang-format off
constexpr ResolveCaretCase kResolveCaretCases[] = {
    {R"(p libnope.so.9:foo)",
     R"(  ^)", ErrorCode::FILE_NOT_FOUND},
    {R"(p:grp/ev /nonexistent/dprobe/libnope.so:foo)",
     R"(         ^)", ErrorCode::FILE_NOT_FOUND},
    {R"(p /nonexistent/dprobe/libnope.so:0x10)",
     R"(  ^)", ErrorCode::FILE_NOT_FOUND},
    {R"(p /tmp:foo)",
     R"(  ^)", ErrorCode::NO_REGULAR_FILE},
    {R"(p {DATA}/not_elf.txt:foo)",
     R"(  ^)", ErrorCode::NOT_ELF_FILE},
    {R"(p main)",
     R"(  ^)", ErrorCode::NO_EXECUTABLE},
    {R"(r:grp/ev main fd=$retval)",
     R"(         ^)", ErrorCode::NO_EXECUTABLE},
    {R"(p libc.so.6:no_such_function_in_libc)",
     R"(            ^)", ErrorCode::NO_SYMBOL},
    {R"(p {FIX}:fixture_counter)",
     R"(        ^)", ErrorCode::NO_SYMBOL},
    {R"(p libc.so.6:zz_no_such_*_function)",
     R"(            ^)", ErrorCode::NO_SYMBOL_MATCH},
    {R"(p libc.so.6:str*cmp+100000)",
     R"(            ^)", ErrorCode::NO_SYMBOL_MATCH},
    {R"(p libc.so.6:malloc+100000)",
     R"(            ^)", ErrorCode::BAD_SYMBOL_OFFS},
    {R"(p:grp/ev libc.so.6:malloc-4)",
     R"(                   ^)", ErrorCode::BAD_SYMBOL_OFFS},
    {R"(p libc.so.6:0x0)",
     R"(            ^)", ErrorCode::NOT_TEXT_ADDR},
    {R"(p {FIX}:0x10)",
     R"(        ^)", ErrorCode::NOT_TEXT_ADDR},
    {R"(p {FIX}:data_function)",
     R"(        ^)", ErrorCode::NOT_TEXT_ADDR},
    {R"(p {FIX}:helper)",
     R"(        ^)", ErrorCode::NON_UNIQ_SYMBOL},
    {R"(p:grp/ev libc.so.6:free)",
     R"(      ^)", ErrorCode::EVENT_EXIST, R"(p:grp/ev libc.so.6:malloc)"},
    {R"(p libc.so.6:malloc %si)",
     R"(^)", ErrorCode::EVENT_EXIST, R"(p libc.so.6:malloc %di)"},
    {R"(p libc.so.6:malloc %di)",
     R"(^)", ErrorCode::SAME_PROBE, R"(p:dprobes/p_malloc_0 libc.so.6:malloc arg1=%di:x64)"},
    {R"(p:grp/ev libc.so.6:malloc)",
     R"(^)", ErrorCode::SAME_PROBE, R"(p:grp/ev libc.so.6:malloc)"},
    {R"(p {SDT}:%sdt_fix:nothing)",
     R"(        ^)", ErrorCode::NO_SDT_POINT},
    {R"(p {SDT}:%sdt_*:zz*)",
     R"(        ^)", ErrorCode::NO_SDT_POINT},
    {R"(p {SDT}:%sdt_fix:regs $arg1 $arg3)",
     R"(                            ^)", ErrorCode::BAD_ARG_NUM},
    {R"(p {SDT}:%sdt_fix:indexed)",
     R"(        ^)", ErrorCode::BAD_SDT_OPERAND},
    {R"(p {SDT}:%sdt_fix:indexed x=+8($arg1):u32)",
     R"(                         ^)", ErrorCode::BAD_SDT_OPERAND},
    {R"(-:grp/nothing)",
     R"(      ^)", ErrorCode::NO_SUCH_EVENT},
    {R"(-:grp/ev)",
     R"(      ^)", ErrorCode::NO_SUCH_EVENT, R"(p:other/ev libc.so.6:malloc)"},
};
// clang-format on

// Codes whose caret tests are not in a table, with where they are: their
// definitions are too long to draw.
constexpr ErrorCode kCaretTestedElsewhere[] = {
    ErrorCode::TOO_MANY_ARGS,  // tests/unit/lang/error_caret_test.cc, ParseCaretLong
    ErrorCode::EVENT_TOO_BIG,  // tests/unit/lang/error_caret_test.cc, ParseCaretLong
    // What the agent reports: tests/unit/cli/arm_errors_test.cc, and end to
    // end in tests/integration.
    ErrorCode::BAD_INSN_BNDRY,
    ErrorCode::BAD_INSN,
    ErrorCode::BLACKLISTED,
    ErrorCode::NO_OOL_SLOT,
    ErrorCode::FAIL_REG_PROBE,
    ErrorCode::OBJ_NOT_LOADED,  // tests/unit/cli/probe_plan_test.cc
    // Event selectors (syscalls:GLOB): tests/unit/lang/syscall_events_test.cc
    ErrorCode::NO_TRACEPOINT,
    ErrorCode::NO_SYSCALL_TABLE,
    // The debug information's, on a program compiled with -g:
    // tests/unit/cli/variable_args_test.cc
    ErrorCode::NO_BTFARG,
    ErrorCode::NO_PTR_STRCT,
    ErrorCode::NO_BTF_FIELD,
    ErrorCode::NOSUP_DAT_ARG,
    ErrorCode::BAD_TYPE4STR,
    ErrorCode::NO_DEBUG_INFO,
    ErrorCode::NO_SOURCE_PLACE,
    ErrorCode::VAR_OPTIMIZED,
    ErrorCode::BAD_MEMBER_OP,
    ErrorCode::VAR_UNSUPPORTED,
};

struct Expanded {
  std::string text;
  size_t column;
};

// Substitutes the placeholders; `column` (a caret) moves with the text before it.
Expanded expand(std::string_view text, size_t column = 0) {
  const std::pair<std::string_view, std::string> substitutions[] = {
      {"{FIX}", fixture().lib},
      {"{SDT}", fixture().sdt},
      {"{DATA}", test_support::data_dir()},
  };
  Expanded out{std::string(text), column};
  for (const auto& [placeholder, value] : substitutions) {
    for (size_t at = out.text.find(placeholder); at != std::string::npos;
         at = out.text.find(placeholder, at + value.size())) {
      if (at < out.column) out.column += value.size() - placeholder.size();
      out.text.replace(at, placeholder.size(), value);
    }
  }
  return out;
}

struct Loaded {
  bool ok;
  std::string errors;
};

Loaded load(std::vector<std::string> expressions, std::string executable = {}) {
  std::ostringstream errors;
  auto set = load_definitions({std::move(expressions), {}, std::move(executable), {}, {}}, errors);
  return {set.has_value(), errors.str()};
}

// "dprobe: error: Invalid register name (BAD_REG_NAME) at f:3" -> "BAD_REG_NAME"
std::string reported_name(std::string_view first_line) {
  const size_t open = first_line.rfind(" (");
  const size_t close = first_line.find(')', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return {};
  return std::string(first_line.substr(open + 2, close - open - 2));
}

class ResolveCaretTest : public ::testing::TestWithParam<ResolveCaretCase> {
 protected:
  void SetUp() override { ASSERT_TRUE(fixture().ok) << fixture().error; }
};

TEST_P(ResolveCaretTest, ReportsCodeColumnAndShape) {
  const ResolveCaretCase& c = GetParam();
  ASSERT_NE(c.caret.find('^'), std::string_view::npos);
  const Expanded def = expand(c.definition, c.caret.find('^'));
  std::vector<std::string> expressions;
  if (!c.earlier.empty()) {
    const std::string earlier = expand(c.earlier).text;
    const Loaded alone = load({earlier});
    ASSERT_TRUE(alone.ok) << "the earlier definition must be good:\n" << alone.errors;
    expressions.push_back(earlier);
  }
  expressions.push_back(def.text);

  const Loaded loaded = load(expressions);
  EXPECT_FALSE(loaded.ok);
  ASSERT_EQ(count_errors(loaded.errors), 1u) << loaded.errors;
  const std::vector<std::string> lines = split_lines(loaded.errors);
  ASSERT_GE(lines.size(), 3u) << loaded.errors;
  EXPECT_EQ(reported_name(lines[0]), error_name(c.code)) << loaded.errors;
  EXPECT_EQ(lines[2].find('^'), 11 + def.column) << loaded.errors;
  EXPECT_EQ(loaded.errors.substr(0, loaded.errors.find('^') + 2),
            error_head(error_message(c.code), error_name(c.code), def.text, def.column));
  // Anything after the caret is a detail or a note, indented under it.
  for (size_t i = 3; i < lines.size(); ++i) {
    EXPECT_TRUE(lines[i].starts_with("  ")) << loaded.errors;
  }
}

INSTANTIATE_TEST_SUITE_P(Table, ResolveCaretTest, ::testing::ValuesIn(kResolveCaretCases),
                         [](const auto& info) {
                           return std::string(error_name(info.param.code)) + "_" +
                                  std::to_string(info.index);
                         });

// A parse error reaches the user through load_definitions unchanged.
class ParseCaretThroughCliTest : public ::testing::TestWithParam<lang::test::CaretCase> {};

TEST_P(ParseCaretThroughCliTest, IsTheWholeReport) {
  const lang::test::CaretCase& c = GetParam();
  const Loaded loaded = load({std::string(c.definition)});
  EXPECT_FALSE(loaded.ok);
  const std::string head =
      error_head(error_message(c.code), error_name(c.code), c.definition, c.caret.find('^'));
  EXPECT_EQ(loaded.errors.substr(0, head.size()), head);
  // A hint (lang/hints.h) may follow, indented under the caret.
  const std::vector<std::string> lines = split_lines(loaded.errors.substr(head.size()));
  for (const std::string& line : lines) EXPECT_TRUE(line.starts_with("  ")) << loaded.errors;
}

INSTANTIATE_TEST_SUITE_P(Table, ParseCaretThroughCliTest,
                         ::testing::ValuesIn(lang::test::kParseCaretCases), [](const auto& info) {
                           return std::string(error_name(info.param.code)) + "_" +
                                  std::to_string(info.index);
                         });

TEST(ResolveErrorReport, NoExecutableIsExactlyThreeLines) {
  const Loaded loaded = load({"p main"});
  EXPECT_FALSE(loaded.ok);
  EXPECT_EQ(loaded.errors,
            "dprobe: error: No main executable to look the symbol up in (use -x or OBJ:) "
            "(NO_EXECUTABLE)\n"
            "  Command: p main\n"
            "             ^\n");
}

TEST(ResolveErrorReport, SameProbeIsExactlyThreeLines) {
  const Loaded loaded = load({"p libc.so.6:malloc", "p   libc.so.6:malloc"});
  EXPECT_FALSE(loaded.ok);
  EXPECT_EQ(loaded.errors,
            "dprobe: error: There is already the exact same probe event (SAME_PROBE)\n"
            "  Command: p libc.so.6:malloc\n"
            "           ^\n");
}

TEST(ResolveErrorReport, NoSuchEventIsExactlyThreeLines) {
  const Loaded loaded = load({"-:grp/nothing"});
  EXPECT_FALSE(loaded.ok);
  EXPECT_EQ(loaded.errors,
            "dprobe: error: No event matches the name to remove (NO_SUCH_EVENT)\n"
            "  Command: -:grp/nothing\n"
            "                 ^\n");
}

TEST(ResolveErrorReport, ObjectAddressOutsideTextIsExactlyThreeLines) {
  const Loaded loaded = load({"p:grp/zero libc.so.6:0x0"});
  EXPECT_FALSE(loaded.ok);
  EXPECT_EQ(loaded.errors,
            "dprobe: error: Probe address is not in executable code (NOT_TEXT_ADDR)\n"
            "  Command: p:grp/zero libc.so.6:0x0\n"
            "                                ^\n");
}

TEST(ResolveErrorReport, MissingSymbolNamesTheFileSearched) {
  const Loaded loaded = load({"p libc.so.6:no_such_function_in_libc"});
  EXPECT_FALSE(loaded.ok);
  EXPECT_EQ(loaded.errors,
            "dprobe: error: The symbol is not found (NO_SYMBOL)\n"
            "  Command: p libc.so.6:no_such_function_in_libc\n"
            "                       ^\n"
            "  no_such_function_in_libc in " +
                symbols::test_support::host_libc() + "\n");
}

TEST(ResolveErrorReport, OffsetOutsideTheSymbolShowsItsSize) {
  const test_support::Symbols libc = test_support::load_symbols(symbols::test_support::host_libc());
  ASSERT_TRUE(libc.ok());
  const auto found = libc.table->find("malloc");
  ASSERT_EQ(found.size(), 1u);
  const std::string size = std::to_string(found[0].size);

  const Loaded past_end = load({"p libc.so.6:malloc+100000"});
  EXPECT_EQ(past_end.errors,
            "dprobe: error: Offset is outside the symbol (BAD_SYMBOL_OFFS)\n"
            "  Command: p libc.so.6:malloc+100000\n"
            "                       ^\n"
            "  malloc+100000 (size " +
                size + ")\n");
}

// The detail repeats SYM+OFFS as the user wrote it: "malloc-4", not "malloc+-4".
TEST(ResolveErrorReport, NegativeOffsetDetailKeepsItsSign) {
  const test_support::Symbols libc = test_support::load_symbols(symbols::test_support::host_libc());
  ASSERT_TRUE(libc.ok());
  const auto found = libc.table->find("malloc");
  ASSERT_EQ(found.size(), 1u);

  const Loaded before_start = load({"p libc.so.6:malloc-4"});
  EXPECT_EQ(before_start.errors,
            "dprobe: error: Offset is outside the symbol (BAD_SYMBOL_OFFS)\n"
            "  Command: p libc.so.6:malloc-4\n"
            "                       ^\n"
            "  malloc-4 (size " +
                std::to_string(found[0].size) + ")\n");
}

TEST(ResolveErrorReport, NonUniqueSymbolListsBothCandidates) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  const test_support::Symbols lib = test_support::load_symbols(fixture().lib);
  ASSERT_TRUE(lib.ok());
  const auto helpers = lib.table->find("helper");
  ASSERT_EQ(helpers.size(), 2u);
  ASSERT_NE(helpers[0].address, helpers[1].address);

  const std::string command = "p " + fixture().lib + ":helper";
  const Loaded loaded = load({command});
  EXPECT_FALSE(loaded.ok);
  EXPECT_EQ(loaded.errors,
            "dprobe: error: The symbol is not unique (NON_UNIQ_SYMBOL)\n"
            "  Command: " +
                command + "\n" + std::string(11 + command.find("helper"), ' ') +
                "^\n"
                "  helper has 2 definitions\n"
                "    " +
                symbols::candidate_line(helpers[0]) + ": probe it as " + fixture().lib + ":" +
                dprobe::hex(helpers[0].address) + "\n    " + symbols::candidate_line(helpers[1]) +
                ": probe it as " + fixture().lib + ":" + dprobe::hex(helpers[1].address) + "\n");
}

TEST(ResolveErrorReport, DefinitionFileErrorsNameFileAndLine) {
  const std::string path = test_support::data_path("bad_probes.txt");
  std::ostringstream errors;
  auto set = load_definitions({{}, {path}, {}, {}, {}}, errors);
  EXPECT_FALSE(set.has_value());
  const std::vector<std::string> lines = split_lines(errors.str());
  ASSERT_EQ(count_errors(errors.str()), 2u) << errors.str();
  EXPECT_EQ(lines[0], "dprobe: error: Invalid register name (BAD_REG_NAME) at " + path + ":4");
  EXPECT_EQ(lines[1], "  Command: p:grp/ev libc.so.6:open fd=%zz");
  EXPECT_EQ(lines[3], "dprobe: error: The symbol is not found (NO_SYMBOL) at " + path + ":5");
}

bool in_parse_table(ErrorCode code) {
  return std::ranges::any_of(lang::test::kParseCaretCases,
                             [&](const auto& c) { return c.code == code; });
}

bool in_resolve_table(ErrorCode code) {
  return std::ranges::any_of(kResolveCaretCases, [&](const auto& c) { return c.code == code; });
}

bool tested_elsewhere(ErrorCode code) {
  return std::ranges::find(kCaretTestedElsewhere, code) != std::end(kCaretTestedElsewhere);
}

TEST(ErrorTableCoverage, EveryCodeHasACaretTest) {
  for (size_t i = 0; i < static_cast<size_t>(ErrorCode::kCount); ++i) {
    const auto code = static_cast<ErrorCode>(i);
    EXPECT_TRUE(in_parse_table(code) || in_resolve_table(code) || tested_elsewhere(code))
        << error_name(code)
        << " has no caret test: add a case to tests/unit/lang/caret_cases.h (parse errors) or to "
           "kResolveCaretCases in tests/unit/cli/resolve_caret_test.cc (errors after parsing)";
  }
}

TEST(ErrorTableCoverage, CodesTestedElsewhereAreNotAlsoInATable) {
  for (ErrorCode code : kCaretTestedElsewhere) {
    EXPECT_FALSE(in_parse_table(code) || in_resolve_table(code))
        << error_name(code) << " is in a caret table: drop it from kCaretTestedElsewhere";
  }
}

}  // namespace
}  // namespace dprobe::cli
