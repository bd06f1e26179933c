// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// After `dprobe attach`, the agent (loaded late, by dlopen) stands in front
// of the C library as it does when preloaded: the program's sigprocmask
// cannot block the breakpoint trap, and its exec takes the agent into the
// new program (tests/programs/attach_late.c).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;

TEST(AttachInterposers, BlockingEverySignalAndExecAfterTheAttach) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess late({program("attach_late_O2"), "40", "sleep", "0.3"}, dir.file("out"),
                   dir.file("err"));
  ASSERT_TRUE(late.started());
  ASSERT_TRUE(late.wait_for_output("attach_late: ready", patience()));
  const RunResult run =
      run_dprobe({"attach", "-p", std::to_string(late.pid()), "--duration", "3", "--profile", "-e",
                  "p:late/work work i=%di:s32", "-e", "p:late/nap libc.so.6:clock_nanosleep", "-o",
                  dir.file("trace")});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_EQ(late.wait(patience()), 0)
      << "it survived its own sigprocmask, and sleep ran: " << late.err();
  const auto lines = parse_trace(read_file(dir.file("trace")));
  size_t work = 0;
  size_t naps_of_sleep = 0;
  for (const TraceLine& line : lines) {
    if (line.event == "work") ++work;
    if (line.event == "nap" && line.comm == "sleep") ++naps_of_sleep;
  }
  EXPECT_GT(work, 10u) << "calls made with every signal blocked";
  EXPECT_EQ(naps_of_sleep, 1u) << "the exec'd program is traced: " << run;
  EXPECT_THAT(run.err, HasSubstr("not probed there: p:late/work work")) << run;
}

}  // namespace
}  // namespace dprobe::integration
