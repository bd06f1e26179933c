// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Programs the machine has, traced through their libraries: ls (libc's
// opendir), sqlite3 (libsqlite3's sqlite3_prepare_v2) and xz (liblzma).
// Each is skipped, with the reason, where the machine lacks it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(RealPrograms, LsOpensTheDirectoriesItIsGiven) {
  const std::string ls = find_tool("ls");
  if (ls.empty()) GTEST_SKIP() << "no ls in PATH";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string first = dir.file("first");
  const std::string second = dir.file("second dir");
  std::filesystem::create_directory(first);
  std::filesystem::create_directory(second);
  write_file(first + "/file-in-first", "");
  const RunResult run = run_traced({"p:ls/opendir libc.so.6:opendir path=+0(%di):string"},
                                   {ls, first, second}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("file-in-first\n")) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 2u) << run;
  EXPECT_EQ(lines[0].comm, "ls");
  EXPECT_THAT(lines[0].location, StartsWith("opendir+0x0/0x"));
  EXPECT_THAT(lines[0].args, ElementsAre(TraceArg{"path", "\"" + first + "\""}));
  EXPECT_THAT(lines[1].args, ElementsAre(TraceArg{"path", "\"" + second + "\""}));
  const auto row = profile_row(parse_profile(run.err), "opendir");
  ASSERT_TRUE(row);
  EXPECT_EQ(row->hits, 2u);
}

// The command's own options after `--`, right after a definition: they
// belong to the command, not to dprobe.
TEST(RealPrograms, CommandOptionsAfterTheDoubleDash) {
  const std::string ls = find_tool("ls");
  if (ls.empty()) GTEST_SKIP() << "no ls in PATH";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  write_file(dir.file(".hidden"), "");
  const RunResult run =
      run_dprobe({"run", "-e", "p:ls/opendir libc.so.6:opendir path=+0(%di):string", "--", ls, "-a",
                  "-1", dir.path()});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr(".hidden\n")) << "ls ran with -a: " << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 1u) << run;
  EXPECT_EQ(lines[0].arg("path"), "\"" + dir.path() + "\"");
}

// ls of a directory that does not exist: opendir is still called with it,
// and ls's own exit status (2) comes through.
TEST(RealPrograms, LsExitStatusComesThrough) {
  const std::string ls = find_tool("ls");
  if (ls.empty()) GTEST_SKIP() << "no ls in PATH";
  const RunResult run = run_traced({"p:ls/opendir libc.so.6:opendir path=+0(%di):string"},
                                   {ls, "/nonexistent-dprobe-dir"});
  EXPECT_EQ(run.status, 2) << run;
  EXPECT_THAT(run.err, HasSubstr("nonexistent-dprobe-dir")) << "ls's own message: " << run;
}

TEST(RealPrograms, Sqlite3PreparesTheStatementItIsGiven) {
  const std::string sqlite3 = find_tool("sqlite3");
  if (sqlite3.empty()) GTEST_SKIP() << "no sqlite3 in PATH (scripts/install-deps.sh installs it)";
  const RunResult run =
      run_traced({"p:sql/prepare libsqlite3.so.0:sqlite3_prepare_v2 sql=+0(%si):string n=%dx:s32"},
                 {sqlite3, ":memory:", "select 1;"}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("1\n")) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 1u) << run;
  EXPECT_EQ(lines[0].comm, "sqlite3");
  EXPECT_THAT(lines[0].location, StartsWith("sqlite3_prepare_v2+0x0/0x"));
  EXPECT_THAT(lines[0].args, ElementsAre(TraceArg{"sql", "\"select 1;\""}, TraceArg{"n", "-1"}));
}

TEST(RealPrograms, Sqlite3SeveralStatements) {
  const std::string sqlite3 = find_tool("sqlite3");
  if (sqlite3.empty()) GTEST_SKIP() << "no sqlite3 in PATH (scripts/install-deps.sh installs it)";
  const RunResult run = run_traced(
      {"p:sql/prepare libsqlite3.so.0:sqlite3_prepare_v2 sql=+0(%si):string",
       "p:sql/step libsqlite3.so.0:sqlite3_step"},
      {sqlite3, ":memory:", "create table t(x); insert into t values (41); select x + 1 from t;"},
      {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("42\n")) << run;
  const auto prepares = lines_of(parse_trace(run.out), "prepare");
  ASSERT_GE(prepares.size(), 1u) << run;
  EXPECT_EQ(prepares[0].arg("sql"),
            "\"create table t(x); insert into t values (41); select x + 1 from t;\"");
  const auto step = profile_row(parse_profile(run.err), "step");
  ASSERT_TRUE(step) << run;
  EXPECT_GE(step->hits, 3u) << "one step at least per statement";
}

// xz -6 asks liblzma for preset 6, and the file it writes is a good .xz.
TEST(RealPrograms, XzCompressesWithThePresetItIsGiven) {
  const std::string xz = find_tool("xz");
  if (xz.empty()) GTEST_SKIP() << "no xz in PATH (scripts/install-deps.sh installs it)";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string input = dir.file("input.txt");
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "line " + std::to_string(i) + " of the dprobe test\n";
  write_file(input, text);
  const RunResult run = run_traced({"p:xz/preset liblzma.so.5:lzma_lzma_preset preset=%si:u32",
                                    "p:xz/code liblzma.so.5:lzma_code action=%si:u32"},
                                   {xz, "-6", "-k", "-f", input}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  const auto lines = parse_trace(run.out);
  const auto presets = lines_of(lines, "preset");
  ASSERT_EQ(presets.size(), 1u) << run;
  EXPECT_EQ(presets[0].comm, "xz");
  EXPECT_THAT(presets[0].args, ElementsAre(TraceArg{"preset", "6"}));
  const auto codes = lines_of(lines, "code");
  ASSERT_GE(codes.size(), 1u) << run;
  EXPECT_EQ(codes.back().arg("action"), "3") << "the last call finishes (LZMA_FINISH)";
  const auto row = profile_row(parse_profile(run.err), "code");
  ASSERT_TRUE(row);
  EXPECT_EQ(row->hits, codes.size());
  // The output decompresses to the input.
  const RunResult check = run_program({xz, "-dc", input + ".xz"});
  EXPECT_EQ(check.status, 0) << check;
  EXPECT_TRUE(check.out == text) << "xz -dc gives back the input";
}

TEST(RealPrograms, XzPresetNine) {
  const std::string xz = find_tool("xz");
  if (xz.empty()) GTEST_SKIP() << "no xz in PATH (scripts/install-deps.sh installs it)";
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string input = dir.file("input.txt");
  write_file(input, "small\n");
  const RunResult run = run_traced({"p:xz/preset liblzma.so.5:lzma_lzma_preset preset=%si:u32"},
                                   {xz, "-9", "-k", "-f", input});
  EXPECT_EQ(run.status, 0) << run;
  const auto presets = lines_of(parse_trace(run.out), "preset");
  ASSERT_EQ(presets.size(), 1u) << run;
  EXPECT_EQ(presets[0].arg("preset"), "9");
  EXPECT_THAT(run.err, Not(HasSubstr("error"))) << run;
}

}  // namespace
}  // namespace dprobe::integration
