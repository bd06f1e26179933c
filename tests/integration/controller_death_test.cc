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
#include <sys/prctl.h>

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

// Orphans of the test's children become the test's children meanwhile.
class ChildSubreaper {
 public:
  ChildSubreaper() { ok_ = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0; }
  ~ChildSubreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); }
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

// The exit status of `pid`, a child of the test's, once it ends within
// `limit`.
std::optional<int> wait_child(pid_t pid, std::chrono::milliseconds limit) {
  int wstatus = 0;
  pid_t done = 0;
  if (!eventually([&] { return (done = ::waitpid(pid, &wstatus, WNOHANG)) != 0; }, limit))
    return std::nullopt;
  if (done != pid) return std::nullopt;
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

uint64_t file_size(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

// Every difference between the text of the program, its C library and the
// dynamic loader in the process and in their files ("" when none).
std::string patched_text(pid_t pid) {
  const std::string exe = executable_path(pid);
  std::set<std::string> paths;
  for (const Mapping& m : read_maps(pid)) {
    if (m.path == exe || is_libc_path(m.path) || is_loader_path(m.path)) paths.insert(m.path);
  }
  std::string differences;
  for (const std::string& path : paths) {
    const std::string found = text_differences_from_file(pid, path);
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
                                 const std::function<std::string()>& out) {
  const auto limit = kRestorePromise + took_to_arm;
  const bool restored = eventually([&] { return !armed_byte(first_byte(pid, probe)); }, 5s);
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - killed);
  EXPECT_TRUE(restored) << "busy_probe still patched 5 s after dprobe was killed";
  EXPECT_LE(elapsed, limit) << "busy_probe restored " << elapsed.count()
                            << " ms after dprobe was killed; arming took " << took_to_arm.count()
                            << " ms";
  ::testing::Test::RecordProperty("took_to_arm_ms", static_cast<int>(took_to_arm.count()));
  ::testing::Test::RecordProperty("restored_after_ms", static_cast<int>(elapsed.count()));
  EXPECT_EQ(patched_text(pid), "");
  const uint64_t before = calls_of(out());
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(process_running(pid)) << "1 s after dprobe's death";
  EXPECT_GT(calls_of(out()), before) << "no progress in the second after dprobe's death";
}

TEST(ControllerDeath, KilledRunLeavesTheProgramRunningUnpatched) {
  ChildSubreaper subreaper;
  ASSERT_TRUE(subreaper.ok());
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string trace = dir.file("trace");
  const auto started = std::chrono::steady_clock::now();
  LiveProcess dprobe({DPROBE_BINARY, "run", "-o", trace, "-e", kBusyProbe, "--",
                      program("busy_loop_O2"), "4", "4"},
                     dir.file("out"), dir.file("err"));
  ASSERT_TRUE(dprobe.started());
  ASSERT_TRUE(dprobe.wait_for_output("busy_loop: ready", 20s)) << dprobe.err();
  const auto pid = static_cast<pid_t>(last_number_after(dprobe.out(), "busy_loop: ready ").value());
  const auto probe = symbol_address(pid, "busy_probe");
  if (!probe) GTEST_SKIP() << "needs nm for busy_probe's address";
  ASSERT_TRUE(
      eventually([&] { return armed_byte(first_byte(pid, *probe)) && file_size(trace) > 0; }, 20s))
      << "no hits: " << dprobe.err();
  const auto took_to_arm = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);

  dprobe.signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  expect_restored_and_running(pid, *probe, killed, took_to_arm, [&] { return dprobe.out(); });
  EXPECT_EQ(dprobe.wait(10s), 128 + SIGKILL);
  // The orphan is the test's child now: it ends as it would have untraced.
  EXPECT_EQ(wait_child(pid, 30s), 0) << dprobe.out().substr(0, 2000);
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
  ASSERT_TRUE(busy.wait_for_output("busy_loop: ready", 20s)) << busy.err();
  const pid_t pid = busy.pid();
  const auto probe = symbol_address(pid, "busy_probe");
  if (!probe) GTEST_SKIP() << "needs nm for busy_probe's address";
  const TextSnapshot before = text_snapshot(pid);
  const std::string trace = dir.file("trace");
  const auto started = std::chrono::steady_clock::now();
  LiveProcess dprobe(
      {DPROBE_BINARY, "attach", "-p", std::to_string(pid), "-o", trace, "-e", kBusyProbe},
      dir.file("out"), dir.file("err"));
  ASSERT_TRUE(
      eventually([&] { return armed_byte(first_byte(pid, *probe)) && file_size(trace) > 0; }, 20s))
      << "no hits: " << dprobe.err();
  const auto took_to_arm = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);

  dprobe.signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  expect_restored_and_running(pid, *probe, killed, took_to_arm, [&] { return busy.out(); });
  EXPECT_EQ(text_snapshot(pid), before);
  EXPECT_EQ(dprobe.wait(10s), 128 + SIGKILL);
  // The agent is free for the next dprobe: attaching again works.
  const RunResult again = run_dprobe({"attach", "-p", std::to_string(pid), "-e", kBusyProbe,
                                      "--duration", "0.2", "--profile", "-o", "/dev/null"});
  EXPECT_EQ(again.status, 0) << again;
  const auto row = profile_row(parse_profile(again.err), "busy");
  EXPECT_TRUE(row && row->hits > 0) << again;
  EXPECT_EQ(text_snapshot(pid), before);
  EXPECT_EQ(busy.wait(30s), 0) << busy.out().substr(0, 2000) << busy.err();
  EXPECT_THAT(busy.out(), HasSubstr("busy_loop: done\n"));
}

// Killed while the program loads and unloads a library with a probe in it
// (each load asks dprobe for the library's probes and waits for the
// answer): the program does not wait for an answer that cannot come, and
// runs its remaining cycles to the end.
TEST(ControllerDeath, KilledWhileTheProgramLoadsLibraries) {
  ChildSubreaper subreaper;
  ASSERT_TRUE(subreaper.ok());
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string plugin_dir = DPROBE_PROGRAMS_DIR;
  const std::string trace = dir.file("trace");
  LiveProcess dprobe({DPROBE_BINARY, "run", "-o", trace, "-e",
                      "p:g/f " + plugin_dir + "/libdprobe_test_plugin.so:plugin_func x=%di:s64",
                      "--", program("dl_host_O2"), plugin_dir, "20000"},
                     dir.file("out"), dir.file("err"));
  ASSERT_TRUE(dprobe.started());
  ASSERT_TRUE(eventually([&] { return file_size(trace) > 0; }, 20s)) << dprobe.err();
  // Its child, dl_host: the only process in /proc whose parent is dprobe.
  pid_t pid = 0;
  ASSERT_TRUE(eventually(
      [&] {
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
          const std::string name = entry.path().filename().string();
          if (name.find_first_not_of("0123456789") != std::string::npos) continue;
          const std::string stat = read_file("/proc/" + name + "/stat");
          const size_t paren = stat.rfind(')');
          if (paren == std::string::npos) continue;
          std::istringstream fields(stat.substr(paren + 2));
          char state = 0;
          pid_t parent = 0;
          if (fields >> state >> parent && parent == dprobe.pid()) pid = std::stoi(name);
        }
        return pid != 0;
      },
      5s));
  ASSERT_NE(read_file("/proc/" + std::to_string(pid) + "/cmdline").find("dl_host_O2"),
            std::string::npos);

  dprobe.signal(SIGKILL);
  EXPECT_EQ(dprobe.wait(10s), 128 + SIGKILL);
  EXPECT_EQ(wait_child(pid, 60s), 0) << dprobe.out() << dprobe.err();
  EXPECT_THAT(dprobe.out(), HasSubstr("dl_host: done 20000\n")) << dprobe.err();
}

}  // namespace
}  // namespace dprobe::integration
