// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A thread that goes back into the first bytes of a probed function
// (tests/programs/handler_return.c) after dprobe attached: a signal handler
// that began before, or the place where `attach` stopped the thread that
// loads the agent. The probe stays a breakpoint until the thread has gone
// on, and becomes a jump when tried again. Before, the jump was written at
// once and the thread went back into the middle of it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;

TEST(HandlerReturn, AHandlerFromBeforeAttachReturnsIntoAProbeThatWaitedForIt) {
  for (int run_number = 0; run_number < 2; ++run_number) {
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    LiveProcess target({program("handler_return_O2")}, dir.file("out"), dir.file("err"));
    ASSERT_TRUE(target.started());
    ASSERT_TRUE(target.wait_for_output("handler_return: in handler", patience(2))) << target.err();
    LiveProcess attach({DPROBE_BINARY, "attach", "-p", std::to_string(target.pid()), "-e",
                        "p:g/div division_entry d=%di", "--probes", "-o", dir.file("trace")},
                       dir.file("attach.out"), dir.file("attach.err"));
    ASSERT_TRUE(attach.started());
    // Reaped here, or dprobe would wait for a zombie.
    EXPECT_EQ(target.wait(patience(3)), 0) << target.out() << target.err() << attach.err();
    EXPECT_EQ(attach.wait(patience(3)), 0) << attach.err();
    EXPECT_THAT(attach.err(), HasSubstr("division_entry+0x0/0x7  [BREAKPOINT: ")) << attach.err();
    EXPECT_EQ(target.out(),
              "handler_return: in handler\n"
              "handler_return: quotient 110 calls ok 1 jump 1\n");
    const auto lines = parse_trace(read_file(dir.file("trace")));
    EXPECT_EQ(lines.size(), 1000u) << "every call after the handler's return traced";
  }
}

// The thread attach stops spends its time in a rep stosb two bytes into
// the probed function, so that is where it is stopped, and where the CLI
// puts it back after the agent is loaded. (Before, the program died of
// SIGILL.)
TEST(HandlerReturn, TheThreadThatLoadsTheAgentGoesBackIntoAProbeThatWaitedForIt) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess target({program("handler_return_O2"), "fill"}, dir.file("out"), dir.file("err"));
  ASSERT_TRUE(target.started());
  ASSERT_TRUE(target.wait_for_output("handler_return: filling", patience(2))) << target.err();
  LiveProcess attach({DPROBE_BINARY, "attach", "-p", std::to_string(target.pid()), "-e",
                      "p:g/fill fill_entry", "--probes", "-o", dir.file("trace")},
                     dir.file("attach.out"), dir.file("attach.err"));
  ASSERT_TRUE(attach.started());
  EXPECT_EQ(target.wait(patience(6)), 0) << target.out() << target.err() << attach.err();
  EXPECT_EQ(attach.wait(patience(3)), 0) << attach.err();
  EXPECT_THAT(attach.err(), HasSubstr("fill_entry+0x0/0x7  [BREAKPOINT: ")) << attach.err();
  EXPECT_EQ(target.out(),
            "handler_return: filling\n"
            "handler_return: fills ok 1 jump 1\n");
  EXPECT_FALSE(parse_trace(read_file(dir.file("trace"))).empty());
}

}  // namespace
}  // namespace dprobe::integration
