// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What dprobe writes where: the traced program's stdout carries nothing of
// dprobe's but the trace (and with -o not even that), every summary goes
// to stderr; and at the end one line says which children ran untraced
// without --follow, and which probes stayed pending.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kWork = "p:g/work work who=%di:s32";

TEST(OutputContract, WithOutputFileStdoutIsTheProgramsAlone) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult plain = run_program({program("forks_O2"), "fork"});
  ASSERT_EQ(plain.status, 0) << plain;
  const RunResult run = run_traced({kWork}, {program("forks_O2"), "fork"},
                                   {"-o", dir.file("trace"), "--profile", "--probes"});
  ASSERT_EQ(run.status, 0) << run;
  // Same lines, but the pids differ from run to run.
  EXPECT_EQ(run.out.rfind("forks: parent ", 0), 0u) << run;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'),
            std::count(plain.out.begin(), plain.out.end(), '\n'))
      << run;
  EXPECT_TRUE(parse_profile(run.out).empty()) << run;
  EXPECT_EQ(parse_profile(run.err).size(), 1u) << run;
  EXPECT_THAT(run.err, HasSubstr("work+0x0/")) << run;  // --probes, on stderr
  EXPECT_EQ(parse_trace(read_file(dir.file("trace"))).size(), 2u) << run;
  // The trace file has the trace alone.
  EXPECT_TRUE(parse_profile(read_file(dir.file("trace"))).empty());
}

TEST(OutputContract, WithoutOutputFileStdoutHasTheTraceAndTheProgramsOutput) {
  const RunResult run =
      run_traced({kWork}, {program("forks_O2"), "fork"}, {"--profile", "--probes"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_EQ(parse_trace(run.out).size(), 2u) << run;
  EXPECT_THAT(run.out, HasSubstr("forks: parent ")) << run;
  EXPECT_TRUE(parse_profile(run.out).empty()) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("OPTIMIZED"))) << run;
  EXPECT_THAT(run.out, Not(HasSubstr("dprobe:"))) << run;
}

// A child is named by the program it execs, read when it execs: one that
// lives a few milliseconds may be gone by then on a loaded machine, and
// keep its parent's name. These children live longer than that.
TEST(Untraced, AChildThatExecsIsNamedWithWhatToDo) {
  const RunResult run = run_traced({kWork}, {program("forks_O2"), "forkexec", "sleep", "0.2"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err,
              HasSubstr("dprobe: 1 child process ran untraced (sleep); --follow traces it\n"))
      << run;
}

TEST(Untraced, ForkedChildrenAreCounted) {
  const RunResult run = run_traced({"p:g/opendir libc.so.6:opendir"},
                                   {"/bin/sh", "-c", "true & true & wait; /bin/true"});
  ASSERT_EQ(run.status, 0) << run;
  // Two subshells of sh (the last command may be exec'd in place).
  EXPECT_THAT(run.err, HasSubstr(" child processes ran untraced (")) << run;
  EXPECT_THAT(run.err, HasSubstr("); --follow traces them\n")) << run;
}

TEST(Untraced, NothingToSayWithFollowOrWithoutChildren) {
  const RunResult followed =
      run_traced({kWork}, {program("forks_O2"), "forkexec", "true"}, {"--follow"});
  ASSERT_EQ(followed.status, 0) << followed;
  EXPECT_THAT(followed.err, Not(HasSubstr("untraced"))) << followed;
  const RunResult alone = run_traced({kWork}, {program("forks_O2"), "exec", "true"});
  ASSERT_EQ(alone.status, 0) << alone;
  EXPECT_THAT(alone.err, Not(HasSubstr("untraced"))) << alone;
  EXPECT_THAT(alone.err, Not(HasSubstr("stayed pending"))) << alone;
}

// attach: the children the process starts while attached.
TEST(Untraced, ChildrenStartedWhileAttached) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess shell({"/bin/sh", "-c", "echo ready; while :; do sleep 0.05; done"}, dir.file("out"),
                    dir.file("err"));
  ASSERT_TRUE(shell.wait_for_output("ready", patience()));
  const RunResult attach = run_dprobe({"attach", "-p", std::to_string(shell.pid()), "--duration",
                                       "0.5", "-e", "p:g/opendir libc.so.6:opendir"});
  ASSERT_EQ(attach.status, 0) << attach;
  EXPECT_THAT(attach.err, HasSubstr(" child processes ran untraced (")) << attach;
  EXPECT_THAT(attach.err, HasSubstr("sleep")) << attach;
  EXPECT_THAT(attach.err, HasSubstr("); --follow traces them\n")) << attach;
}

// The case that motivated it: a library only a child of `sh -c` loads.
TEST(Untraced, APendingProbeOnALibraryOnlyAChildLoads) {
  const std::string sqlite3 = find_tool("sqlite3");
  if (sqlite3.empty()) GTEST_SKIP() << "no sqlite3 in PATH (scripts/install-deps.sh installs it)";
  const std::string step = "p:sq/step libsqlite3.so.0:sqlite3_step";
  // A query of some 100 ms: sqlite3 is still there when its name is read.
  const std::string script =
      sqlite3 +
      " :memory: 'with recursive c(x) as (select 1 union all select x + 1 from c where x < "
      "300000) select count(*) from c;' >/dev/null; true";
  const RunResult run = run_traced({step}, {"/bin/sh", "-c", script});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_TRUE(parse_trace(run.out).empty()) << run;
  EXPECT_THAT(run.err,
              HasSubstr("dprobe: 1 child process ran untraced (sqlite3); --follow traces it\n"))
      << run;
  EXPECT_THAT(run.err, HasSubstr("dprobe: 1 probe stayed pending: libsqlite3.so.0 never loaded "
                                 "(sq/step); a child process may have loaded it: --follow "
                                 "traces children\n"))
      << run;

  const RunResult followed = run_traced({step}, {"/bin/sh", "-c", script}, {"--follow"});
  ASSERT_EQ(followed.status, 0) << followed;
  EXPECT_FALSE(lines_of(parse_trace(followed.out), "step").empty()) << followed;
  EXPECT_THAT(followed.err, Not(HasSubstr("untraced"))) << followed;
  EXPECT_THAT(followed.err, Not(HasSubstr("stayed pending"))) << followed;
}

}  // namespace
}  // namespace dprobe::integration
