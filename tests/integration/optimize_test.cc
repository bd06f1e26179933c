// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Jump-optimized probes as a user sees them (tests/programs/busy_loop.c):
// placed at the start of `dprobe run` (one thread), a probe on a plain
// function becomes a jmp rel32 to its trampoline, `--probes` says so as the
// kernel's kprobes/list does, and the threads that call it all the time
// are traced through it; `--no-optimize` leaves the breakpoint, with that
// reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

struct Placed {
  unsigned first_byte = 0x100;
  std::string err;
  uint64_t hits = 0;
};

// Runs busy_loop (2 threads, 1 s) under `dprobe run --probes` with `extra`
// options, and reads the probed function's first byte while it runs.
Placed place_busy_probe(const std::vector<std::string>& extra) {
  TempDir dir;
  Placed placed;
  if (!dir.ok()) return placed;
  std::vector<std::string> args{DPROBE_BINARY, "run",
                                "--probes",    "--profile",
                                "-o",          dir.file("trace"),
                                "-e",          "p:g/busy busy_probe t=%di"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", program("busy_loop_O2"), "2", "1"});
  LiveProcess dprobe(args, dir.file("out"), dir.file("err"));
  if (!dprobe.wait_for_output("busy_loop: ready", patience(2))) return placed;
  const auto pid = static_cast<pid_t>(last_number_after(dprobe.out(), "busy_loop: ready ").value());
  if (const auto probe = symbol_address(pid, "busy_probe"))
    placed.first_byte = first_byte(pid, *probe);
  dprobe.wait(patience(3));
  placed.err = dprobe.err();
  if (const auto row = profile_row(parse_profile(dprobe.err()), "busy")) placed.hits = row->hits;
  return placed;
}

TEST(Optimize, APlainFunctionBecomesAJumpAndIsListedOptimized) {
  const Placed placed = place_busy_probe({});
  if (placed.first_byte == 0x100) GTEST_SKIP() << "needs nm for busy_probe's address";
  EXPECT_EQ(placed.first_byte, kJmpRel32) << placed.err;
  // The list comes first, one line a probe, before anything else is said.
  EXPECT_THAT(placed.err,
              ContainsRegex("^[0-9a-f]{16}  busy_probe\\+0x0/0x[0-9a-f]+  \\[OPTIMIZED\\]\n"));
  EXPECT_GT(placed.hits, 1000u) << "two threads calling it for a second";
}

TEST(Optimize, NoOptimizeKeepsTheBreakpointAndSaysWhy) {
  const Placed placed = place_busy_probe({"--no-optimize"});
  if (placed.first_byte == 0x100) GTEST_SKIP() << "needs nm for busy_probe's address";
  EXPECT_EQ(placed.first_byte, kInt3) << placed.err;
  EXPECT_THAT(placed.err, HasSubstr("busy_probe+0x0/0x"));
  EXPECT_THAT(placed.err, HasSubstr("[BREAKPOINT: optimization is off (--no-optimize)]"));
  EXPECT_GT(placed.hits, 100u);
}

// A probe whose displaced bytes would hold another probe's stays a
// breakpoint, with the reason (and both are hit).
TEST(Optimize, AProbeInsideAnothersDisplacedBytesKeepsBothWorking) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const RunResult run =
      run_traced({"p:g/a work", "p:g/b work+1"}, {program("threads_O0"), "2", "1000"},
                 {"--probes", "--profile", "-o", dir.file("trace")});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, HasSubstr("another probe is inside the instructions it displaces")) << run;
  const auto rows = parse_profile(run.err);
  const auto a = profile_row(rows, "a");
  const auto b = profile_row(rows, "b");
  ASSERT_TRUE(a && b) << run;
  EXPECT_EQ(a->hits, 2000u);
  EXPECT_EQ(b->hits, 2000u);
}

}  // namespace
}  // namespace dprobe::integration
