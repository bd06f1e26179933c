// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe list` through run_list: one line per function, "0x%016x %8u name"
// and " [ifunc: ...]" for IFUNCs, checked against what the symbols layer reads
// from the same file.
#include "cli/command/list_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "unit/cli/cli_test_support.h"
#include "unit/symbols/fixture_build.h"

namespace dprobe::cli {
namespace {

using symbols::test_support::fixture;
using symbols::test_support::host_libc;
using test_support::CommandRun;
using test_support::list_line;
using test_support::run_list_with;
using test_support::split_lines;
using test_support::without_ifunc_detail;

std::string expected_list(const std::string& path, std::string_view glob) {
  const test_support::Symbols object = test_support::load_symbols(path);
  if (!object.ok()) return "(cannot open " + path + ")";
  std::string expected;
  for (const symbols::FunctionSymbol* f : object.table->match(glob)) expected += list_line(*f);
  return expected;
}

TEST(ListCommand, LibcByNameMatchesTheSymbolsLayer) {
  const CommandRun run = run_list_with("libc.so.6:str*cmp");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(without_ifunc_detail(run.out), expected_list(host_libc(), "str*cmp"));
  const std::vector<std::string> lines = split_lines(run.out);
  ASSERT_FALSE(lines.empty());
  for (const std::string& line : lines) {
    EXPECT_THAT(line, ::testing::MatchesRegex(
                          "0x[0-9a-f]{16} [ 0-9]{7}[0-9] str[a-z_]*cmp( \\[ifunc: .*\\])?"));
  }
}

TEST(ListCommand, LineShapeForAKnownFunction) {
  const test_support::Symbols libc = test_support::load_symbols(host_libc());
  ASSERT_TRUE(libc.ok());
  const auto found = libc.table->find("strcmp");
  ASSERT_EQ(found.size(), 1u);
  char expected[128];
  std::snprintf(expected, sizeof expected, "0x%016llx %8llu strcmp%s\n",
                static_cast<unsigned long long>(found[0].address),
                static_cast<unsigned long long>(found[0].size),
                found[0].is_ifunc ? " [ifunc]" : "");
  const std::string out = run_list_with("libc.so.6:strcmp").out;
  EXPECT_EQ(without_ifunc_detail(out), expected);
  // The implementation this machine's loader binds strcmp to (the C
  // library is loaded in the test too), and the resolver's own spelling.
  EXPECT_THAT(out, ::testing::MatchesRegex(".* strcmp \\[ifunc: calls go to "
                                           "(__strcmp_[a-z0-9_]+|0x[0-9a-f]+); its resolver is "
                                           ".*libc.so.6:0x[0-9a-f]+\\]\n"));
}

TEST(ListCommand, FixtureLibraryByPath) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  const CommandRun run = run_list_with(fixture().lib + ":call_*");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, expected_list(fixture().lib, "call_*"));
  EXPECT_EQ(split_lines(run.out).size(), 2u);
}

TEST(ListCommand, EmptyGlobListsEverythingWithIfuncsMarked) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  const CommandRun run = run_list_with(fixture().lib + ":");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(without_ifunc_detail(run.out), expected_list(fixture().lib, "*"));
  // Both static helpers, the IFUNC marked, its resolver not.
  EXPECT_THAT(run.out, ::testing::ContainsRegex("\n0x[0-9a-f]{16} +[0-9]+ helper\n"
                                                "0x[0-9a-f]{16} +[0-9]+ helper\n"));
  // Not loaded in dprobe: its implementation is only known at run time.
  EXPECT_THAT(run.out, ::testing::ContainsRegex(" picked \\[ifunc: calls go to the implementation "
                                                "its resolver picks at run time; its resolver is "
                                                ".*libfix.so.1.0:0x[0-9a-f]+\\]\n"));
  EXPECT_THAT(run.out, ::testing::ContainsRegex(" pick\n"));
  EXPECT_THAT(run.out, ::testing::Not(::testing::HasSubstr("fixture_counter")));
}

TEST(ListCommand, ExecutableAloneListsItsOwnFunctions) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  const CommandRun run = run_list_with("", fixture().app);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, expected_list(fixture().app, "*"));
  EXPECT_THAT(run.out, ::testing::HasSubstr(" main\n"));
}

TEST(ListCommand, GlobWithoutObjectSearchesTheExecutable) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  const CommandRun run = run_list_with("ma*", fixture().app);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, expected_list(fixture().app, "ma*"));
}

TEST(ListCommand, LibraryFoundThroughTheExecutable) {
  ASSERT_TRUE(fixture().ok) << fixture().error;
  const CommandRun run = run_list_with("libfix.so.1:call_*", fixture().app);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, expected_list(fixture().lib, "call_*"));
}

TEST(ListCommand, NoMatchPrintsNothing) {
  const CommandRun run = run_list_with("libc.so.6:zz_no_such_*_function");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(ListCommand, MissingObjectByPath) {
  const CommandRun run = run_list_with("/nonexistent/dprobe/libnope.so:*");
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "dprobe: error: file not found: /nonexistent/dprobe/libnope.so\n");
}

TEST(ListCommand, MissingObjectBySoname) {
  const CommandRun run = run_list_with("libnope.so.9:*");
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, ::testing::StartsWith("dprobe: error: "));
  EXPECT_THAT(run.err, ::testing::HasSubstr("libnope.so.9"));
}

TEST(ListCommand, NotAnElfFile) {
  const CommandRun run = run_list_with(test_support::data_path("not_elf.txt") + ":*");
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "dprobe: error: not an ELF file: " + test_support::data_path("not_elf.txt") + "\n");
}

TEST(ListCommand, NothingToList) {
  for (const char* pattern : {"", "str*"}) {
    const CommandRun run = run_list_with(pattern);
    EXPECT_EQ(run.status, 2) << pattern;
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(run.err, "dprobe: error: nothing to list: give -x BINARY or OBJ:PATTERN\n");
  }
}

}  // namespace
}  // namespace dprobe::cli
