// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe attach -p TID` with a thread's id, as `ps -L` or `top -H` shows
// it: dprobe attaches to the thread's process, and says so. And a process
// that is the first of its own PID namespace (a container's), attached to
// by its host pid: the agent names its threads by its namespace's ids.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;

// A thread of `pid` other than its main one, 0 if none.
pid_t other_thread(pid_t pid) {
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const auto tid = static_cast<pid_t>(std::stol(entry.path().filename().string()));
    if (tid != pid) return tid;
  }
  return 0;
}

TEST(AttachThread, AThreadsIdAttachesToItsProcessAndSaysSo) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess busy({program("busy_loop_O2"), "2", "10"}, dir.file("busy.out"),
                   dir.file("busy.err"));
  ASSERT_TRUE(busy.started());
  ASSERT_TRUE(busy.wait_for_output("busy_loop: ready", patience(2))) << busy.err();
  const pid_t pid = busy.pid();
  const pid_t tid = other_thread(pid);
  ASSERT_NE(tid, 0) << "busy_loop has no second thread";
  const RunResult run =
      run_dprobe({"attach", "-p", std::to_string(tid), "-e", "p:g/busy busy_probe", "--duration",
                  "0.3", "--profile", "-o", "/dev/null"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, HasSubstr(std::to_string(tid) + " is a thread of process " +
                                 std::to_string(pid) + ": attaching to the process"));
  const auto row = profile_row(parse_profile(run.err), "busy");
  ASSERT_TRUE(row) << run;
  EXPECT_GT(row->hits, 0u) << run;
}

// The first child of `parent` (/proc's children list), 0 if none yet.
pid_t first_child(pid_t parent) {
  const std::string children = read_file("/proc/" + std::to_string(parent) + "/task/" +
                                         std::to_string(parent) + "/children");
  return children.empty() ? 0 : static_cast<pid_t>(std::stol(children));
}

TEST(AttachNamespace, AProcessOfItsOwnPidNamespaceDetachesCleanly) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LiveProcess unshare(
      {"/usr/bin/unshare", "-fp", "--mount-proc", program("busy_loop_O2"), "2", "60"},
      dir.file("busy.out"), dir.file("busy.err"));
  ASSERT_TRUE(unshare.started());
  if (!unshare.wait_for_output("busy_loop: ready", patience(2))) {
    GTEST_SKIP() << "no PID namespace here (unshare -fp): " << unshare.err();
  }
  const pid_t pid = first_child(unshare.pid());
  ASSERT_NE(pid, 0);
  EXPECT_THAT(read_file("/proc/" + std::to_string(pid) + "/status"),
              HasSubstr("NSpid:\t" + std::to_string(pid) + "\t1\n"))
      << "busy_loop is pid 1 of its namespace";
  const std::string trace = dir.file("trace");
  const RunResult run =
      run_dprobe({"attach", "-p", std::to_string(pid), "-e", "p:g/busy busy_probe", "--duration",
                  "0.3", "--profile", "-o", trace, "--buffer-size", "4k"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("did not confirm the detach")));
  const auto row = profile_row(parse_profile(run.err), "busy");
  ASSERT_TRUE(row) << run;
  EXPECT_GT(row->hits, 0u) << run;
  // The lines name the threads by their host ids, as the kernel's trace
  // does, not by the namespace's (1, 2, 3).
  std::set<uint64_t> host_tids;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    host_tids.insert(std::stoull(task.path().filename().string()));
  }
  const std::vector<TraceLine> lines = parse_trace(read_file(trace));
  ASSERT_FALSE(lines.empty()) << run;
  for (const TraceLine& line : lines) {
    ASSERT_TRUE(host_tids.contains(line.tid)) << "tid " << line.tid << " is no thread's host id";
  }
  // --json keeps the namespace's ids beside the host's, to match the
  // container's own logs.
  const std::string json = dir.file("trace.json");
  const RunResult as_json =
      run_dprobe({"attach", "-p", std::to_string(pid), "-e", "p:g/busy busy_probe", "--duration",
                  "0.2", "--json", "-o", json, "--buffer-size", "4k"});
  EXPECT_EQ(as_json.status, 0) << as_json;
  const std::string text = read_file(json);
  const std::string first = text.substr(0, text.find('\n'));
  EXPECT_THAT(first, HasSubstr("\"pid\":" + std::to_string(pid) + ",")) << first;
  EXPECT_THAT(first, HasSubstr("\"ns_pid\":1,")) << first;
  EXPECT_THAT(first, HasSubstr("\"ns_tid\":")) << first;
}

}  // namespace
}  // namespace dprobe::integration
