// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Probes hit at the edges of a program's life (tests/programs/lifetime.c):
// in atexit handlers and destructors, while other threads still run during
// exit, and in the C library's own clean-up. The program must end as it
// would untraced, with all its output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class Lifetime : public ::testing::TestWithParam<const char*> {
 protected:
  std::string exe(const std::string& name) const { return program(name + "_" + GetParam()); }
};

TEST_P(Lifetime, CallsInAtexitHandlersAndDestructorsAreTraced) {
  const RunResult run =
      run_traced({"p:life/marker marker code=%di:s32"}, {exe("lifetime"), "fini"}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("lifetime: fini\n")) << run;
  const auto lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 3u) << run;
  EXPECT_THAT(lines[0].args, ElementsAre(TraceArg{"code", "1"}));
  EXPECT_THAT(lines[1].args, ElementsAre(TraceArg{"code", "2"}));
  EXPECT_THAT(lines[2].args, ElementsAre(TraceArg{"code", "3"}));
}

// libc's free is the first thing one traces; the C library and dprobe's
// own agent call it while the program exits. The program still exits 0,
// and its buffered output (printf's "args: ok") is written.
TEST_P(Lifetime, ProbeOnFreeLetsTheProgramExit) {
  const RunResult args = run_traced({"p:life/free libc.so.6:free ptr=%di"}, {exe("args")});
  EXPECT_EQ(args.status, 0) << args;
  EXPECT_THAT(args.out, HasSubstr("args: ok\n")) << args;
  const RunResult status =
      run_traced({"p:life/free libc.so.6:free ptr=%di"}, {exe("status"), "exit", "7"});
  EXPECT_EQ(status.status, 7) << status;
  EXPECT_THAT(status.out, HasSubstr("status: exit 7\n")) << status;
}

TEST_P(Lifetime, ProbesOnMallocAndFreeInAThreadedProgram) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult run = run_traced(
      {"p:life/malloc libc.so.6:malloc size=%di:u64", "p:life/free libc.so.6:free ptr=%di"},
      {exe("threads"), "4", "1000"}, {"--profile", "-o", dir.file("trace")});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("threads: ok\n")) << run;
  const auto rows = parse_profile(run.err);
  const auto malloc_row = profile_row(rows, "malloc");
  ASSERT_TRUE(malloc_row) << run;
  EXPECT_GE(malloc_row->hits, 1u) << "printf's buffer at least";
}

// glibc's thread exit blocks every signal, frees, then hands the stack
// back with madvise (advise_stack_range). A breakpoint trap that finds
// SIGTRAP blocked kills the process, so the agent puts no breakpoint on the
// C library functions that run so (the kernel's uprobes take no signal and
// can go there); a jump, written before the program runs, raises none.
// Breakpoints only: refused, before the program runs.
TEST_P(Lifetime, ProbesOnWhatGlibcRunsWithSignalsBlockedAreJumpsOrRefused) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult run = run_traced(
      {"p:life/madvise libc.so.6:madvise len=%si:u64", "p:life/free libc.so.6:free ptr=%di"},
      {exe("lifetime"), "detached"}, {"--profile", "--probes", "-o", dir.file("trace")});
  if (breakpoints_only()) {
    EXPECT_EQ(run.status, 2) << run;
    EXPECT_THAT(run.err, HasSubstr("Probe point is on the blacklist (BLACKLISTED)")) << run;
    EXPECT_THAT(run.err, HasSubstr("every signal blocked")) << run;
    EXPECT_THAT(run.out, Not(HasSubstr("lifetime: detached"))) << "refused before the program ran";
    return;
  }
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_EQ(run.out, "lifetime: detached\n") << run;
  EXPECT_THAT(run.err, ContainsRegex("madvise\\+0x0/0x[0-9a-f]+  \\[OPTIMIZED\\]")) << run;
  const auto rows = parse_profile(run.err);
  const auto madvise = profile_row(rows, "madvise");
  ASSERT_TRUE(madvise) << run;
  EXPECT_GE(madvise->hits, 1u) << "the threads' stacks go back with madvise";
  const auto free_row = profile_row(rows, "free");
  ASSERT_TRUE(free_row) << run;
  EXPECT_GE(free_row->hits, 256u);
  for (const TraceLine& line : parse_trace(read_file(dir.file("trace")))) {
    if (line.event == "madvise") {
      ASSERT_NE(line.arg("len"), "0") << line;
    }
  }
}

// Threads keep hitting a probe while main returns and the C library
// writes out a 1 MiB stdout buffer: the process still exits 0, with all
// of its output.
TEST_P(Lifetime, ThreadsHittingProbesWhileTheProgramExits) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult run =
      run_traced({"p:life/marker marker"}, {exe("lifetime"), "threads"}, {"-o", dir.file("trace")});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 16384) << "all of stdout";
}

INSTANTIATE_TEST_SUITE_P(Optimization, Lifetime, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
