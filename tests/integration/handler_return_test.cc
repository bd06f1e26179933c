// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A signal handler that began before dprobe attached, and returns into the
// first bytes of a probed function (tests/programs/handler_return.c): the
// probe stays a breakpoint while the handler runs (its place is in the
// signal frame, on the stack of the very thread that loads the agent), and
// becomes a jump once the handler has returned. Before, the jump was
// written at once and the handler returned into the middle of it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(HandlerReturn, AHandlerFromBeforeAttachReturnsIntoAProbeThatWaitedForIt) {
  for (int run_number = 0; run_number < 2; ++run_number) {
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    LiveProcess target({program("handler_return_O2")}, dir.file("out"), dir.file("err"));
    ASSERT_TRUE(target.started());
    ASSERT_TRUE(target.wait_for_output("handler_return: in handler", 20s)) << target.err();
    LiveProcess attach({DPROBE_BINARY, "attach", "-p", std::to_string(target.pid()), "-e",
                        "p:g/div division_entry d=%di", "--probes", "-o", dir.file("trace")},
                       dir.file("attach.out"), dir.file("attach.err"));
    ASSERT_TRUE(attach.started());
    // Reaped here, or dprobe would wait for a zombie.
    EXPECT_EQ(target.wait(30s), 0) << target.out() << target.err() << attach.err();
    EXPECT_EQ(attach.wait(30s), 0) << attach.err();
    EXPECT_THAT(attach.err(), HasSubstr("division_entry+0x0/0x7  [BREAKPOINT: ")) << attach.err();
    EXPECT_EQ(target.out(),
              "handler_return: in handler\n"
              "handler_return: quotient 110 calls ok 1 jump 1\n");
    const auto lines = parse_trace(read_file(dir.file("trace")));
    EXPECT_EQ(lines.size(), 1000u) << "every call after the handler's return traced";
  }
}

}  // namespace
}  // namespace dprobe::integration
