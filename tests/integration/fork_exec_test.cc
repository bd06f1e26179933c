// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Children and new programs (tests/programs/forks.c): a forked child runs
// with no probes unless --follow, then it is traced under its own pid; a
// child that execs another program is traced there only with --follow; a
// traced process that execs stays traced in either mode, with what does
// not resolve in the new program said once. work(who): 1 the parent before
// the fork, 2 the child, 3 the parent after the child ended.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
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
const std::string kSleep = "p:g/sleep libc.so.6:clock_nanosleep";
const std::string kPluginDir = DPROBE_PROGRAMS_DIR;
const std::string kPlugin =
    "p:g/f " + kPluginDir + "/libdprobe_test_plugin.so:plugin_func x=%di:s64";

struct Pids {
  uint64_t parent = 0;
  uint64_t child = 0;
};

// "forks: parent P child C" from the program's output.
Pids pids_of(const std::string& out) {
  return {last_number_after(out, "forks: parent ").value_or(0),
          last_number_after(out, " child ").value_or(0)};
}

std::vector<std::string> who_values(const std::vector<TraceLine>& lines) {
  std::vector<std::string> values;
  for (const TraceLine& line : lines) values.push_back(line.arg("who"));
  return values;
}

std::vector<TraceLine> lines_of_tid(const std::vector<TraceLine>& lines, uint64_t tid) {
  std::vector<TraceLine> out;
  for (const TraceLine& line : lines) {
    if (line.tid == tid) out.push_back(line);
  }
  return out;
}

uint64_t hits_of(const std::string& out, const std::string& event) {
  const auto row = profile_row(parse_profile(out), event);
  return row ? row->hits : ~uint64_t{0};
}

TEST(ForkExec, WithoutFollowTheChildRunsUntraced) {
  const RunResult run = run_traced({kWork}, {program("forks_O2"), "fork"}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  const Pids pids = pids_of(run.out);
  ASSERT_NE(pids.parent, 0u) << run;
  ASSERT_NE(pids.child, pids.parent) << run;
  const auto lines = parse_trace(run.out);
  EXPECT_EQ(who_values(lines), (std::vector<std::string>{"1", "3"})) << run;
  for (const TraceLine& line : lines) {
    EXPECT_EQ(line.tid, pids.parent) << line;
    EXPECT_EQ(line.comm, "forks_O2") << line;
  }
  EXPECT_EQ(hits_of(run.err, "work"), 2u) << run;
}

TEST(ForkExec, WithFollowTheChildIsTracedUnderItsOwnPid) {
  const RunResult run =
      run_traced({kWork}, {program("forks_O2"), "fork"}, {"--follow", "--profile"});
  EXPECT_EQ(run.status, 0) << run;
  const Pids pids = pids_of(run.out);
  ASSERT_NE(pids.parent, 0u) << run;
  ASSERT_NE(pids.child, pids.parent) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 3u) << run;
  EXPECT_EQ(who_values(lines_of_tid(lines, pids.parent)), (std::vector<std::string>{"1", "3"}))
      << run;
  const auto child = lines_of_tid(lines, pids.child);
  ASSERT_EQ(child.size(), 1u) << run;
  EXPECT_EQ(child[0].arg("who"), "2");
  EXPECT_EQ(child[0].comm, "forks_O2");
  EXPECT_EQ(hits_of(run.err, "work"), 3u) << run;
  // One trace, as the kernel's: the processes' lines in time order, the
  // child's call (who=2) between the parent's two.
  EXPECT_EQ(who_values(lines), (std::vector<std::string>{"1", "2", "3"})) << run;
}

// A child that is not followed keeps a copy of its parent's agent, and
// sees the parent's trace memory, until it exits: exit() runs the agent's
// destructor there, which must leave the parent's rings and return
// instances alone (the parent's thread is not the child's, so it would
// take it for gone and count its live instance as a miss).
TEST(ForkExec, AChildThatExitsLeavesTheParentsReturnInstancesAlone) {
  const RunResult run = run_traced({"r:g/inside inside_fork rv=$retval:s32"},
                                   {program("forks_O2"), "exitinside"}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  const Pids pids = pids_of(run.out);
  ASSERT_NE(pids.parent, 0u) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 1u) << run;
  EXPECT_EQ(lines[0].tid, pids.parent) << lines[0];
  EXPECT_EQ(lines[0].arg("rv"), "0") << lines[0];
  const auto row = profile_row(parse_profile(run.err), "inside");
  ASSERT_TRUE(row) << run;
  EXPECT_EQ(row->hits, 1u) << run;
  EXPECT_EQ(row->misses, 0u) << "the child's exit counted the parent's instance: " << run;
}

// A child that execs another program (sleep, whose one call of
// clock_nanosleep is probed in libc): traced there only with --follow, and
// then what does not resolve in sleep (work) is said once, by pid.
class ForkExecFollow : public ::testing::TestWithParam<bool> {
 protected:
  bool follow() const { return GetParam(); }
  std::vector<std::string> options() const {
    return follow() ? std::vector<std::string>{"--follow", "--profile"}
                    : std::vector<std::string>{"--profile"};
  }
};

TEST_P(ForkExecFollow, AChildThatExecsIsTracedOnlyWithFollow) {
  const std::string sleep = find_tool("sleep");
  if (sleep.empty()) GTEST_SKIP() << "needs sleep in $PATH";
  const RunResult run =
      run_traced({kWork, kSleep}, {program("forks_O2"), "forkexec", "sleep", "0"}, options());
  EXPECT_EQ(run.status, 0) << run;
  const Pids pids = pids_of(run.out);
  ASSERT_NE(pids.child, 0u) << run;
  const auto lines = parse_trace(run.out);
  const auto work = lines_of(lines, "work");
  EXPECT_EQ(who_values(work), (std::vector<std::string>{"1", "3"})) << run;
  for (const TraceLine& line : work) EXPECT_EQ(line.tid, pids.parent) << line;
  const auto slept = lines_of(lines, "sleep");
  const std::string unresolved =
      " (pid " + std::to_string(pids.child) + "): not probed there: " + kWork + "\n";
  if (follow()) {
    ASSERT_EQ(slept.size(), 1u) << run;
    EXPECT_EQ(slept[0].comm, "sleep");
    EXPECT_EQ(slept[0].tid, pids.child);
    EXPECT_TRUE(slept[0].location.starts_with("clock_nanosleep+0x0/")) << slept[0];
    EXPECT_THAT(run.err, HasSubstr(unresolved)) << run;
    EXPECT_EQ(hits_of(run.err, "sleep"), 1u) << run;
  } else {
    EXPECT_TRUE(slept.empty()) << run;
    EXPECT_THAT(run.err, Not(HasSubstr("not probed there"))) << run;
    EXPECT_EQ(hits_of(run.err, "sleep"), 0u) << run;
  }
  EXPECT_EQ(hits_of(run.err, "work"), 2u) << run;
}

// The traced process itself execs: the same pid, traced on in the new
// program (under its new name) with or without --follow; the definitions
// that do not resolve there are said, and the others armed.
TEST_P(ForkExecFollow, AProcessThatExecsIsTracedInTheNewProgram) {
  const std::string sleep = find_tool("sleep");
  if (sleep.empty()) GTEST_SKIP() << "needs sleep in $PATH";
  const RunResult run =
      run_traced({kWork, kSleep}, {program("forks_O2"), "exec", "sleep", "0"}, options());
  EXPECT_EQ(run.status, 0) << run;
  const auto pid = last_number_after(run.out, "forks: exec ");
  ASSERT_TRUE(pid) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 2u) << run;
  EXPECT_EQ(lines[0].event, "work");
  EXPECT_EQ(lines[0].arg("who"), "1");
  EXPECT_EQ(lines[0].comm, "forks_O2");
  EXPECT_EQ(lines[0].tid, *pid);
  EXPECT_EQ(lines[1].event, "sleep");
  EXPECT_EQ(lines[1].comm, "sleep");
  EXPECT_EQ(lines[1].tid, *pid);
  EXPECT_THAT(run.err,
              HasSubstr(" (pid " + std::to_string(*pid) + "): not probed there: " + kWork + "\n"))
      << run;
  EXPECT_EQ(hits_of(run.err, "work"), 1u) << run;
  EXPECT_EQ(hits_of(run.err, "sleep"), 1u) << run;
}

// Exec into a program that has work too, which then forks: the new
// program is probed as the first was, its child only with --follow.
TEST_P(ForkExecFollow, ExecThenForkInTheNewProgram) {
  const RunResult run =
      run_traced({kWork}, {program("forks_O2"), "exec", program("forks_O0"), "fork"}, options());
  EXPECT_EQ(run.status, 0) << run;
  const auto pid = last_number_after(run.out, "forks: exec ");
  const Pids pids = pids_of(run.out);
  ASSERT_TRUE(pid) << run;
  ASSERT_EQ(pids.parent, *pid) << "the same process, after the exec";
  const auto lines = parse_trace(run.out);
  const auto mine = lines_of_tid(lines, *pid);
  EXPECT_EQ(who_values(mine), (std::vector<std::string>{"1", "1", "3"})) << run;
  ASSERT_EQ(mine.size(), 3u) << run;
  EXPECT_EQ(mine[0].comm, "forks_O2");
  EXPECT_EQ(mine[1].comm, "forks_O0");
  EXPECT_EQ(mine[2].comm, "forks_O0");
  const auto child = lines_of_tid(lines, pids.child);
  if (follow()) {
    ASSERT_EQ(child.size(), 1u) << run;
    EXPECT_EQ(child[0].arg("who"), "2");
    EXPECT_EQ(child[0].comm, "forks_O0");
  } else {
    EXPECT_TRUE(child.empty()) << run;
  }
  EXPECT_EQ(lines.size(), follow() ? 4u : 3u) << run;
  EXPECT_THAT(run.err, Not(HasSubstr("not probed there"))) << run;
}

// The child loads and unloads a library 200 times (the loader's probe
// fires in the child) while the parent calls work(1) the whole time: the
// parent's count is exact in either mode; the child's calls are traced,
// with its pid, only with --follow.
TEST_P(ForkExecFollow, AChildLoadingLibrariesLeavesTheParentsProbesAlone) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::vector<std::string> options = this->options();
  // The parent's calls, as fast as optimized probes let it make them, all
  // fit in its ring (a count lost to a full ring would not be exact).
  options.insert(options.end(),
                 {"-o", dir.file("trace"), "--buffer-size", "32M", "--max-threads", "8"});
  const RunResult run =
      run_traced({kWork, kPlugin}, {program("forks_O2"), "dlchild", kPluginDir, "200"}, options);
  EXPECT_EQ(run.status, 0) << run;
  const Pids pids = pids_of(run.out);
  const auto calls = last_number_after(run.out, " calls ");
  ASSERT_TRUE(calls && pids.parent != 0 && pids.child != 0) << run;
  const auto lines = parse_trace(read_file(dir.file("trace")));
  const auto parent = lines_of_tid(lines, pids.parent);
  EXPECT_EQ(parent.size(), *calls) << run;
  EXPECT_TRUE(std::all_of(parent.begin(), parent.end(), [](const TraceLine& line) {
    return line.event == "work" && line.arg("who") == "1";
  }));
  const auto child = lines_of_tid(lines, pids.child);
  if (follow()) {
    ASSERT_EQ(child.size(), 400u) << run;
    for (size_t i = 0; i < child.size(); ++i) {
      // Each cycle: plugin_func(10), then work(2).
      const bool plugin = i % 2 == 0;
      ASSERT_EQ(child[i].event, plugin ? "f" : "work") << child[i];
      ASSERT_EQ(plugin ? child[i].arg("x") : child[i].arg("who"), plugin ? "10" : "2") << child[i];
    }
    EXPECT_EQ(hits_of(run.err, "f"), 200u) << run;
    EXPECT_EQ(hits_of(run.err, "work"), *calls + 200) << run;
  } else {
    EXPECT_TRUE(child.empty()) << run;
    EXPECT_EQ(hits_of(run.err, "f"), 0u) << run;
    EXPECT_EQ(hits_of(run.err, "work"), *calls) << run;
  }
  EXPECT_EQ(lines.size(), parent.size() + child.size()) << "no line of a third process";
}

INSTANTIATE_TEST_SUITE_P(ForkExec, ForkExecFollow, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Follow" : "NoFollow";
                         });

}  // namespace
}  // namespace dprobe::integration
