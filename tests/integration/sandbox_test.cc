// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A program in an allowlist seccomp sandbox (tests/programs/sandbox.c)
// lives through its probes' hits and its exit as it does untraced: no hit
// asks the kernel anything the sandbox forbids (gettid, prctl, tgkill,
// sigaltstack), and each call is traced under the thread's id and name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;

// (how the sandbox is installed, extra options)
class Sandbox : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(Sandbox, HitsAndExitAsUntraced) {
  const auto& [how, mode] = GetParam();
  std::vector<std::string> options = {"--profile"};
  if (std::string(mode) == "breakpoints") options.push_back("--no-optimize");
  const RunResult run =
      run_traced({"p:sb/in sandboxed_step i=%di:s64", "r:sb/out sandboxed_step rv=$retval:s64"},
                 {program("sandbox_O2"), how}, options);
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("sandbox: 10000\n")) << run;
  const std::vector<TraceLine> lines = parse_trace(run.out);
  ASSERT_EQ(lines.size(), 200u) << run;
  for (const TraceLine& line : lines) {
    EXPECT_EQ(line.comm, "sandbox_O2") << line;
    EXPECT_EQ(line.tid, lines.front().tid) << line;
  }
  EXPECT_EQ(lines.front().arg("i"), "0");
  EXPECT_EQ(lines.back().arg("rv"), "199");
  const auto rows = parse_profile(run.err);
  for (const char* event : {"in", "out"}) {
    const auto row = profile_row(rows, event);
    ASSERT_TRUE(row) << event << "\n" << run;
    EXPECT_EQ(row->hits, 100u) << event;
    EXPECT_EQ(row->misses, 0u) << event;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, Sandbox,
                         ::testing::Combine(::testing::Values("syscall", "prctl"),
                                            ::testing::Values("jumps", "breakpoints")));

}  // namespace
}  // namespace dprobe::integration
