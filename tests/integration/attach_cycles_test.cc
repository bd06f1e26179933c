// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach` and detach, 100 times in a row, to one process whose
// four threads call the probed function without pause
// (tests/programs/busy_loop.c): each attach traces hits, each detach
// leaves the probed function's bytes exactly as they were (read from
// outside, /proc/PID/mem), and the process runs on, its whole text
// identical to its file at the end.
//
// The probe becomes a jump although the four threads never stop: those on
// a core are asked where they are (agent/thread_census.h). One may answer
// from the probe's out-of-line slot a few times running; that attach keeps
// the breakpoint, with the reason, and is counted in the output. The bytes
// are checked after each detach whatever the probe was. Small rings: an
// optimized probe's hits outrun any reader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "integration/live_process.h"
#include "integration/probe_list.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kCycles = 100;

TEST(AttachCycles, HundredAttachesUnderLoadEachTracesAndEachDetachRestoresTheBytes) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess busy({program("busy_loop_O2"), "4", "0"}, dir.file("busy.out"), dir.file("busy.err"));
  ASSERT_TRUE(busy.started() && busy.wait_for_output("busy_loop: ready", patience(2)))
      << busy.out() << busy.err();
  const pid_t pid = busy.pid();
  const std::string exe = executable_path(pid);
  const auto probe = symbol_address(pid, "busy_probe");
  const auto size = symbol_size(exe, "busy_probe");
  if (!probe || !size) GTEST_SKIP() << "needs nm for busy_probe's address and size";
  const std::optional<std::string> original = read_memory(pid, *probe, *size);
  ASSERT_TRUE(original);
  ASSERT_EQ(text_differences_from_file(pid, exe), "");
  const TextSnapshot before = text_snapshot(pid);

  std::map<std::string, int> states;  // how the probe was armed, attach by attach
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    const RunResult attach = run_dprobe(
        {"attach", "-p", std::to_string(pid), "-e", "p:g/busy busy_probe t=%di", "--duration",
         "0.05", "--buffer-size", "16K", "--probes", "-o", dir.file("trace")});
    ASSERT_EQ(attach.status, 0) << "attach " << cycle << ": " << attach;
    ASSERT_THAT(attach.err, Not(HasSubstr("error"))) << "attach " << cycle << ": " << attach;
    const auto lines = lines_of(parse_trace(read_file(dir.file("trace"))), "busy");
    ASSERT_FALSE(lines.empty()) << "attach " << cycle << " traced no hit: " << attach;
    const auto listed = parse_probe_list(attach.err);
    const auto state = listed.find({"busy_probe", 0});
    ASSERT_NE(state, listed.end()) << "attach " << cycle << ": " << attach;
    ++states[state->second];
    ASSERT_EQ(read_memory(pid, *probe, *size), original)
        << "busy_probe's bytes after detach " << cycle;
    ASSERT_TRUE(process_running(pid)) << "after detach " << cycle << ": " << busy.err();
  }
  std::string summary;
  for (const auto& [state, count] : states) summary += " " + std::to_string(count) + "x " + state;
  std::printf("busy_probe was armed as:%s\n", summary.c_str());
  if (breakpoints_only()) {
    EXPECT_EQ(states.count(std::string(kOptimized)), 0u);
  } else {
    EXPECT_GE(states[std::string(kOptimized)], kCycles * 9 / 10) << summary;
    for (const auto& [state, count] : states) {
      EXPECT_THAT(state, ::testing::AnyOf(std::string(kOptimized),
                                          HasSubstr("a thread stayed inside the instructions")))
          << count << " attaches";
    }
  }

  const uint64_t calls = last_number_after(busy.out(), "busy_loop: calls ").value_or(0);
  EXPECT_TRUE(eventually(
      [&] { return last_number_after(busy.out(), "busy_loop: calls ").value_or(0) > calls; },
      patience()))
      << "busy_loop stopped making calls";
  EXPECT_EQ(text_snapshot(pid), before);
  EXPECT_EQ(text_differences_from_file(pid, exe), "");
  EXPECT_EQ(busy.err(), "");
}

}  // namespace
}  // namespace dprobe::integration
