// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The built `dprobe` executable, run as a user would: its exit status and
// what it writes on stdout and stderr, each captured in a file of its own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/child_process.h"
#include "unit/cli/cli_test_support.h"
#include "unit/symbols/fixture_build.h"

namespace dprobe::cli {
namespace {

using symbols::test_support::host_libc;
using ::testing::HasSubstr;
using ::testing::Not;

using BinaryRun = support::CapturedRun;

// Runs DPROBE_BINARY with `args`; gives up (and kills it) after `timeout`.
BinaryRun run_dprobe(const std::vector<std::string>& args,
                     std::chrono::milliseconds timeout = support::patience(3)) {
  std::vector<std::string> argv{DPROBE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return support::run_captured(argv, timeout);
}

TEST(DprobeBinary, BadDefinitionPrintsTheKernelErrorLogOnStderr) {
  const BinaryRun run = run_dprobe({"check", "-e", "p:grp/ev libc.so.6:open fd=%zz"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "dprobe: error: Invalid register name (BAD_REG_NAME)\n"
            "  Command: p:grp/ev libc.so.6:open fd=%zz\n"
            "                                      ^\n");
}

TEST(DprobeBinary, GoodDefinitionsPrintOnStdout) {
  const BinaryRun run = run_dprobe(
      {"check", "-e", "p libc.so.6:malloc %di", "--event", "r16:grp/r libc.so.6:malloc $retval"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.out,
            "p:dprobes/p_malloc_0 libc.so.6:malloc arg1=%di:x64\n"
            "r16:grp/r libc.so.6:malloc arg1=$retval:x64\n");
}

TEST(DprobeBinary, DefinitionFileOption) {
  const BinaryRun run = run_dprobe({"check", "-f", test_support::data_path("probes.txt")});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out,
            "r:grp/malloc_ret libc.so.6:malloc ptr=$retval:x64\n"
            "p:dprobes/p_free_0 libc.so.6:free ptr=%di:x64\n");
}

TEST(DprobeBinary, ExecutableIsFoundInPath) {
  if (access(symbols::test_support::kSqlite3, X_OK) != 0) GTEST_SKIP() << "no sqlite3";
  // -x sqlite3, without a '/', is looked up in $PATH as a shell would.
  const BinaryRun run =
      run_dprobe({"check", "-x", "sqlite3", "-e", "p libsqlite3.so.0:sqlite3_step"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "p:dprobes/p_sqlite3_step_0 libsqlite3.so.0:sqlite3_step\n");
}

TEST(DprobeBinary, HelpExitsZero) {
  const BinaryRun run = run_dprobe({"--help"});
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(run.out, HasSubstr("check"));
  EXPECT_THAT(run.out, HasSubstr("list"));
}

TEST(DprobeBinary, SubcommandHelpExitsZero) {
  const BinaryRun run = run_dprobe({"check", "--help"});
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(run.out, HasSubstr("--format"));
}

TEST(DprobeBinary, UnknownSubcommandExitsTwo) {
  const BinaryRun run = run_dprobe({"bogus"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err, "");
}

TEST(DprobeBinary, UnknownOptionOfASubcommandExitsTwo) {
  for (const char* subcommand : {"check", "list"}) {
    const BinaryRun run = run_dprobe({subcommand, "--bogus"});
    EXPECT_EQ(run.status, 2) << subcommand;
    EXPECT_EQ(run.out, "") << subcommand;
    EXPECT_THAT(run.err, HasSubstr("--bogus")) << subcommand;
  }
}

TEST(DprobeBinary, ANearMissSaysWhatItMayHaveMeant) {
  const BinaryRun option = run_dprobe({"report", "--graf", "x.dat"});
  EXPECT_EQ(option.status, 2);
  EXPECT_THAT(option.err, HasSubstr("--graf: did you mean --graph?\n"));
  const BinaryRun subcommand = run_dprobe({"attch", "-p", "1"});
  EXPECT_EQ(subcommand.status, 2);
  EXPECT_THAT(subcommand.err, HasSubstr("did you mean attach?\n"));
  // Far from every option: no guess.
  const BinaryRun far = run_dprobe({"check", "--bogus"});
  EXPECT_THAT(far.err, Not(HasSubstr("did you mean")));
}

TEST(DprobeBinary, UnknownTopLevelOptionExitsTwo) {
  const BinaryRun run = run_dprobe({"--bogus"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err, "");
}

TEST(DprobeBinary, NoSubcommandExitsTwo) {
  const BinaryRun run = run_dprobe({});
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err, "");
}

TEST(DprobeBinary, ListPrintsOneLineForOneFunction) {
  const test_support::Symbols libc = test_support::load_symbols(host_libc());
  ASSERT_TRUE(libc.ok());
  const auto found = libc.table->find("malloc");
  ASSERT_EQ(found.size(), 1u);

  const BinaryRun run = run_dprobe({"list", "libc.so.6:malloc"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_THAT(run.out, ::testing::MatchesRegex("0x[0-9a-f]{16} +[0-9]+ malloc\n"));
  EXPECT_EQ(run.out, test_support::list_line(found[0]));
}

// glibc's memcpy has a default version (@@GLIBC_2.14, an IFUNC) and a
// compatibility one (@GLIBC_2.2.5): the name means the default. free has
// the aliases cfree (a compatibility version) and __libc_free: a wildcard
// probes the address once, as free; naming cfree still probes it as cfree.
TEST(DprobeBinary, VersionsAndAliasesOfTheCLibrary) {
  const BinaryRun memcpy_run = run_dprobe({"check", "-e", "p libc.so.6:memcpy"});
  EXPECT_EQ(memcpy_run.status, 0) << memcpy_run.err;
  EXPECT_EQ(memcpy_run.out, "p:dprobes/p_memcpy_0 libc.so.6:memcpy\n");

  const BinaryRun frees = run_dprobe({"check", "-e", "p libc.so.6:*free"});
  EXPECT_EQ(frees.status, 0) << frees.err;
  EXPECT_THAT(frees.out, ::testing::HasSubstr("p:dprobes/p_free_0 libc.so.6:free\n"));
  EXPECT_THAT(frees.out, ::testing::Not(::testing::HasSubstr("cfree")));
  EXPECT_THAT(frees.out, ::testing::Not(::testing::HasSubstr("__libc_free ")));

  const BinaryRun cfree = run_dprobe({"check", "-e", "p libc.so.6:cfree"});
  EXPECT_EQ(cfree.status, 0) << cfree.err;
  EXPECT_EQ(cfree.out, "p:dprobes/p_cfree_0 libc.so.6:cfree\n");
}

TEST(DprobeBinary, ListWithoutAnythingToListExitsTwo) {
  const BinaryRun run = run_dprobe({"list"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "dprobe: error: nothing to list: give -x BINARY or OBJ:PATTERN\n");
}

// -e and -f apply in command-line order: a removal after a file removes
// what the file defined, before it finds nothing.
TEST(DprobeBinary, DefinitionsApplyInCommandLineOrder) {
  const std::string file = test_support::data_path("probes.txt");
  const BinaryRun after = run_dprobe({"check", "-f", file, "-e", "-:grp/malloc_ret"});
  EXPECT_EQ(after.status, 0) << after.err;
  EXPECT_EQ(after.out, "p:dprobes/p_free_0 libc.so.6:free ptr=%di:x64\n");
  const BinaryRun before = run_dprobe({"check", "-e", "-:grp/malloc_ret", "-f", file});
  EXPECT_EQ(before.status, 2);
  EXPECT_NE(before.err.find("(NO_SUCH_EVENT)"), std::string::npos) << before.err;
}

TEST(DprobeBinary, BadExecutableIsOneError) {
  const BinaryRun run =
      run_dprobe({"check", "-x", "/nonexistent/prog", "-e", "p main", "-e", "p libc.so.6:malloc"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err, "dprobe: error: /nonexistent/prog: file not found\n");
  EXPECT_EQ(run.out, "");
}

}  // namespace
}  // namespace dprobe::cli
