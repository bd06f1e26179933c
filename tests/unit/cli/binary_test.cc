// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The built `dprobe` executable, run as a user would: its exit status and
// what it writes on stdout and stderr, each captured in a file of its own.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "unit/cli/cli_test_support.h"
#include "unit/symbols/fixture_build.h"

extern char** environ;

namespace dprobe::cli {
namespace {

using symbols::test_support::host_libc;
using ::testing::HasSubstr;

struct BinaryRun {
  int status = -1;  // the exit status; -1 when killed or not started
  bool timed_out = false;
  std::string out;
  std::string err;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs DPROBE_BINARY with `args`; gives up (and kills it) after `timeout`.
BinaryRun run_dprobe(const std::vector<std::string>& args,
                     std::chrono::seconds timeout = std::chrono::seconds(30)) {
  BinaryRun run;
  char dir_template[] = "/tmp/dprobe-bin-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) return run;
  const std::string dir = dir_template;
  const std::string out_path = dir + "/stdout";
  const std::string err_path = dir + "/stderr";

  std::vector<std::string> argv_storage{DPROBE_BINARY};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == 0) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int wstatus = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &wstatus, WNOHANG)) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        run.timed_out = true;
        kill(pid, SIGKILL);
        waitpid(pid, &wstatus, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!run.timed_out && done == pid && WIFEXITED(wstatus)) run.status = WEXITSTATUS(wstatus);
    run.out = read_file(out_path);
    run.err = read_file(err_path);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return run;
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
