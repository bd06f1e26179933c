// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe run --follow` of a program that changes its root before it
// execs (what a container runtime does): the agent reaches the program
// in the new root through the directories it holds open, probes named by
// the container's paths (or the host's) are placed there, and the program
// runs as untraced. Where the new root has no /proc the program runs
// untraced, and its stderr holds nothing of dprobe's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "integration/container_root.h"
#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class FollowRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    root_ = dir_.file("root");
    ASSERT_TRUE(make_root(root_));
    // Whether this machine lets us have a root and namespaces of our own.
    const RunResult probe = run_program(
        {"/usr/bin/unshare", "-fpm", "--mount-proc", "--root=" + root_, "/app", "1", "0.01"});
    if (probe.status != 0) GTEST_SKIP() << "no mount and PID namespaces here: " << probe.err;
  }

  TempDir dir_;
  std::string root_;
};

TEST_F(FollowRoot, AProgramInANewRootIsTracedByItsPaths) {
  const std::string trace = dir_.file("trace");
  const RunResult run = run_dprobe({"run",
                                    "--follow",
                                    "--profile",
                                    "-o",
                                    trace,
                                    "--buffer-size",
                                    "4k",
                                    "-e",
                                    "p:g/inside /app:busy_probe",
                                    "-e",
                                    "p:g/outside " + root_ + "/app:busy_probe",
                                    "-e",
                                    "p:g/nap libc.so.6:nanosleep",
                                    "--",
                                    "/usr/bin/unshare",
                                    "-fpm",
                                    "--mount-proc",
                                    "--root=" + root_,
                                    "/app",
                                    "1",
                                    "0.3"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("busy_loop: done")) << run;
  EXPECT_THAT(run.err, HasSubstr("/app is not a file for /usr/bin/unshare: probed in the programs "
                                 "--follow traces that have it"))
      << run;
  EXPECT_THAT(run.err, Not(HasSubstr("ld.so"))) << run;
  expect_hits(run, {"inside", "outside", "nap"});
  const std::vector<ProfileRow> profile = parse_profile(run.err);
  const auto inside = profile_row(profile, "inside");
  const auto outside = profile_row(profile, "outside");
  EXPECT_EQ(inside->hits + inside->misses, outside->hits + outside->misses)
      << "one function, named twice";
}

// A chroot with no /proc: the agent cannot follow; the program runs on,
// untraced, and its loader says nothing about a preload.
TEST_F(FollowRoot, WithoutProcInTheNewRootTheProgramRunsUntracedAndQuiet) {
  if (::getuid() != 0) GTEST_SKIP() << "chroot needs root";
  const RunResult run =
      run_dprobe({"run", "--follow", "--profile", "-o", dir_.file("trace"), "-e",
                  "p:g/busy /app:busy_probe", "--", "/usr/sbin/chroot", root_, "/app", "1", "0.1"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("busy_loop: done")) << run;
  EXPECT_THAT(run.err, Not(HasSubstr("ld.so"))) << run;
  EXPECT_THAT(run.err, Not(HasSubstr("cannot be preloaded"))) << run;
}

}  // namespace
}  // namespace dprobe::integration
