// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// dprobe killed with SIGKILL while probes hit (no chance to detach): the
// agent sees its connection close and disarms everything at once. Seen
// from outside, through /proc/PID/mem: within 100 ms (and a margin for a
// loaded machine) no byte of the program's text is patched any more, and
// the program runs on to its normal end. With `run`, dprobe is the
// program's parent: the test makes itself the child subreaper, so that
// the orphaned program becomes its child and its exit status can be read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

const std::string kBusyProbe = "p:g/busy busy_probe t=%di";
// The agent's promise is 100 ms. On a machine busy with other work (the
// traced program alone keeps both cores busy) the test allows as much
// again as that machine took, in the same test, to start tracing: undoing
// the probes is less work than placing them was.
constexpr auto kRestorePromise = 100ms;

uint64_t file_size(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

// The file offsets of the C library's _exit, which `dprobe run` sends to
// its agent for as long as the program lives (agent/exit_hold.h): a jump
// that takes no breakpoint to remove, left when dprobe dies, as the jumps
// on functions that run with every signal blocked are. From `nm -D`
// (the text's offsets in the file are its addresses).
std::pair<uint64_t, uint64_t> exit_function_range(const std::string& libc) {
  const std::string nm = find_tool("nm");
  const RunResult run =
      nm.empty() ? RunResult{} : run_program({nm, "-D", "-S", "--defined-only", libc});
  std::istringstream lines(run.status == 0 ? run.out : std::string());
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string address, size, type, name;
    if (fields >> address >> size >> type >> name && name.rfind("_exit@", 0) == 0) {
      const uint64_t begin = std::stoull(address, nullptr, 16);
      return {begin, begin + std::stoull(size, nullptr, 16)};
    }
  }
  return {0, 0};
}

// Every difference between the text of the program, its C library (but
// its _exit, after a run) and the dynamic loader in the process and in
// their files ("" when none).
std::string patched_text(pid_t pid, bool run = false) {
  const std::string exe = executable_path(pid);
  std::set<std::string> paths;
  for (const Mapping& m : read_maps(pid)) {
    if (m.path == exe || is_libc_path(m.path) || is_loader_path(m.path)) paths.insert(m.path);
  }
  std::string differences;
  for (const std::string& path : paths) {
    const auto allowed =
        run && is_libc_path(path) ? exit_function_range(path) : std::pair<uint64_t, uint64_t>{};
    const std::string found = text_differences_from_file(pid, path, allowed);
    if (!found.empty()) differences += path + ": " + found + "\n";
  }
  return differences;
}

uint64_t calls_of(const std::string& out) {
  return last_number_after(out, "busy_loop: calls ").value_or(0);
}

// After dprobe's death: the probe's byte restored in time, all of the text
// as in the files, and the program still making calls a second later.
void expect_restored_and_running(pid_t pid, uint64_t probe,
                                 std::chrono::steady_clock::time_point killed,
                                 std::chrono::milliseconds took_to_arm,
                                 const std::function<std::string()>& out, bool run = false) {
  const auto limit = kRestorePromise + took_to_arm;
  const auto give_up_after = patience();
  const bool restored =
      eventually([&] { return !armed_byte(first_byte(pid, probe)); }, give_up_after);
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - killed);
  EXPECT_TRUE(restored) << "busy_probe still patched " << give_up_after.count()
                        << " ms after dprobe was killed";
  EXPECT_LE(elapsed, limit) << "busy_probe restored " << elapsed.count()
                            << " ms after dprobe was killed; arming took " << took_to_arm.count()
                            << " ms";
  ::testing::Test::RecordProperty("took_to_arm_ms", static_cast<int>(took_to_arm.count()));
  ::testing::Test::RecordProperty("restored_after_ms", static_cast<int>(elapsed.count()));
  EXPECT_EQ(patched_text(pid, run), "");
  const uint64_t before = calls_of(out());
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(process_running(pid)) << "1 s after dprobe's death";
  EXPECT_GT(calls_of(out()), before) << "no progress in the second after dprobe's death";
}

// The program is the process `dprobe run` was started as; its collector,
// beside it, is killed.
TEST(ControllerDeath, KilledRunLeavesTheProgramRunningUnpatched) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace = dir.file("trace");
  const auto started = std::chrono::steady_clock::now();
  LiveProcess dprobe({DPROBE_BINARY, "run", "-o", trace, "-e", kBusyProbe, "--",
                      program("busy_loop_O2"), "4", "4"},
                     dir.file("out"), dir.file("err"));
  ASSERT_TRUE(dprobe.started());
  ASSERT_TRUE(dprobe.wait_for_output("busy_loop: ready", patience(2))) << dprobe.err();
  const auto pid = static_cast<pid_t>(last_number_after(dprobe.out(), "busy_loop: ready ").value());
  ASSERT_EQ(pid, dprobe.pid());
  const pid_t collector = dprobe_collector(pid);
  ASSERT_GT(collector, 0);
  const auto probe = symbol_address(pid, "busy_probe");
  if (!probe) GTEST_SKIP() << "needs nm for busy_probe's address";
  ASSERT_TRUE(eventually(
      [&] { return armed_byte(first_byte(pid, *probe)) && file_size(trace) > 0; }, patience(2)))
      << "no hits: " << dprobe.err();
  const auto took_to_arm = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);

  ::kill(collector, SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  expect_restored_and_running(
      pid, *probe, killed, took_to_arm, [&] { return dprobe.out(); }, /*run=*/true);
  // It ends as it would have untraced: its exit waits for nobody.
  EXPECT_EQ(dprobe.wait(patience(3)), 0) << dprobe.out().substr(0, 2000);
  EXPECT_THAT(dprobe.out(), HasSubstr("busy_loop: done\n"));
}

TEST(ControllerDeath, KilledAttachLeavesTheProgramRunningUnpatched) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  // Long enough to outlast two attaches on a loaded machine: its text is
  // read once more after the second.
  LiveProcess busy({program("busy_loop_O2"), "4", "10"}, dir.file("busy.out"),
                   dir.file("busy.err"));
  ASSERT_TRUE(busy.started());
  ASSERT_TRUE(busy.wait_for_output("busy_loop: ready", patience(2))) << busy.err();
  const pid_t pid = busy.pid();
  const auto probe = symbol_address(pid, "busy_probe");
  if (!probe) GTEST_SKIP() << "needs nm for busy_probe's address";
  const TextSnapshot before = text_snapshot(pid);
  const std::string trace = dir.file("trace");
  const auto started = std::chrono::steady_clock::now();
  LiveProcess dprobe(
      {DPROBE_BINARY, "attach", "-p", std::to_string(pid), "-o", trace, "-e", kBusyProbe},
      dir.file("out"), dir.file("err"));
  ASSERT_TRUE(eventually(
      [&] { return armed_byte(first_byte(pid, *probe)) && file_size(trace) > 0; }, patience(2)))
      << "no hits: " << dprobe.err();
  const auto took_to_arm = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);

  dprobe.signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  expect_restored_and_running(pid, *probe, killed, took_to_arm, [&] { return busy.out(); });
  EXPECT_EQ(text_snapshot(pid), before);
  EXPECT_EQ(dprobe.wait(patience()), 128 + SIGKILL);
  // The agent is free for the next dprobe: attaching again works.
  const RunResult again = run_dprobe({"attach", "-p", std::to_string(pid), "-e", kBusyProbe,
                                      "--duration", "0.2", "--profile", "-o", "/dev/null"});
  EXPECT_EQ(again.status, 0) << again;
  const auto row = profile_row(parse_profile(again.err), "busy");
  EXPECT_TRUE(row && row->hits > 0) << again;
  EXPECT_EQ(text_snapshot(pid), before);
  EXPECT_EQ(busy.wait(patience(3)), 0) << busy.out().substr(0, 2000) << busy.err();
  EXPECT_THAT(busy.out(), HasSubstr("busy_loop: done\n"));
}

// Killed while the program loads and unloads a library with a probe in it
// (each load asks dprobe for the library's probes and waits for the
// answer): the program does not wait for an answer that cannot come, and
// runs its remaining cycles to the end.
TEST(ControllerDeath, KilledWhileTheProgramLoadsLibraries) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string plugin_dir = DPROBE_PROGRAMS_DIR;
  const std::string trace = dir.file("trace");
  LiveProcess host({DPROBE_BINARY, "run", "-o", trace, "-e",
                    "p:g/f " + plugin_dir + "/libdprobe_test_plugin.so:plugin_func x=%di:s64", "--",
                    program("dl_host_O2"), plugin_dir, "20000"},
                   dir.file("out"), dir.file("err"));
  ASSERT_TRUE(host.started());
  ASSERT_TRUE(eventually([&] { return file_size(trace) > 0; }, patience(2))) << host.err();
  const pid_t collector = dprobe_collector(host.pid());
  ASSERT_GT(collector, 0);
  ASSERT_NE(read_file("/proc/" + std::to_string(host.pid()) + "/cmdline").find("dl_host_O2"),
            std::string::npos);

  ::kill(collector, SIGKILL);
  EXPECT_EQ(host.wait(patience(6)), 0) << host.out() << host.err();
  EXPECT_THAT(host.out(), HasSubstr("dl_host: done 20000\n")) << host.err();
}

}  // namespace
}  // namespace dprobe::integration
