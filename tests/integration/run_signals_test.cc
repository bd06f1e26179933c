// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `dprobe run` leaves the process it was started as to the program and
// writes the trace from a process beside it (cli/process/launcher.h). So
// the signals sent to the program's pid, its process group or its cgroup
// reach it once, from their sender (nothing is forwarded), job control
// stops and continues it, and whoever started `dprobe run` waits for the
// program itself ($!, wait).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string senders_program() { return program("cli_robustness_O2"); }

std::vector<std::string> traced_senders() {
  return {DPROBE_BINARY, "run", "-e", "p:sig/marker marker", "--", senders_program(), "senders"};
}

// The lines the program printed for the signals it took ("SIGINT from
// 123"), once it has said "done".
std::vector<std::string> signals_taken(const std::string& out) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < out.size()) {
    const size_t end = out.find('\n', at);
    const std::string line = out.substr(at, end == std::string::npos ? end : end - at);
    if (line.rfind("SIG", 0) == 0) lines.push_back(line);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return lines;
}

std::string from_us(const char* name) {
  return std::string(name) + " from " + std::to_string(::getpid());
}

class RunSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(program_.started());
    ASSERT_TRUE(program_.wait_for_output("ready", patience(3))) << program_.err();
  }

  // Waits for the line that says the program took signal `n` (1-based).
  bool took(size_t n) const {
    return eventually([&] { return signals_taken(program_.out()).size() >= n; }, patience(3));
  }

  // Tells the program to end, and returns what it took.
  std::vector<std::string> finish() {
    program_.signal(SIGUSR1);
    const std::optional<int> status = program_.wait(patience(3));
    EXPECT_EQ(status, std::optional<int>(0)) << program_.err();
    EXPECT_THAT(program_.out(), HasSubstr("done")) << program_.err();
    return signals_taken(program_.out());
  }

  TempDir dir_;
  LiveProcess program_{traced_senders(), dir_.file("out"), dir_.file("err")};
};

TEST_F(RunSignals, ThePidDprobeWasStartedAsIsTheProgram) {
  const std::string exe = "/proc/" + std::to_string(program_.pid()) + "/exe";
  EXPECT_EQ(std::filesystem::read_symlink(exe), std::filesystem::canonical(senders_program()));
  EXPECT_TRUE(finish().empty());
}

TEST_F(RunSignals, ASignalToThePidArrivesOnce) {
  ASSERT_EQ(::kill(program_.pid(), SIGTERM), 0);
  ASSERT_TRUE(took(1)) << program_.out();
  EXPECT_THAT(finish(), ElementsAre(from_us("SIGTERM")));
}

// kill -INT -PGID, as a supervisor or a shell's kill of a job does: every
// process of the group gets it, dprobe's collector included, which passes
// nothing on.
TEST_F(RunSignals, ASignalToTheProcessGroupArrivesOnceFromItsSender) {
  ASSERT_EQ(::kill(-program_.pid(), SIGINT), 0);
  ASSERT_TRUE(took(1)) << program_.out();
  ASSERT_EQ(::kill(-program_.pid(), SIGHUP), 0);
  ASSERT_TRUE(took(2)) << program_.out();
  EXPECT_THAT(finish(), ElementsAre(from_us("SIGINT"), from_us("SIGHUP")));
  EXPECT_THAT(program_.err(), Not(HasSubstr("error"))) << "the trace was written to its end";
}

// Ctrl-Z and fg: the job stops and goes on, as its parent sees it.
TEST_F(RunSignals, JobControlStopsAndContinuesTheProgram) {
  ASSERT_EQ(::kill(-program_.pid(), SIGTSTP), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(program_.pid(), &status, WUNTRACED), program_.pid());
  EXPECT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTSTP) << status;
  ASSERT_EQ(::kill(-program_.pid(), SIGCONT), 0);
  ASSERT_EQ(::kill(program_.pid(), SIGINT), 0);
  ASSERT_TRUE(took(1)) << program_.out();
  EXPECT_THAT(finish(), ElementsAre(from_us("SIGINT")));
}

// ---- A cgroup's processes each sent SIGTERM (systemd's KillMode=control-group) ----

// A cgroup v2 hierarchy this process may make a group in: the unified
// mount of a hybrid system, or the root.
std::optional<std::string> writable_cgroup2() {
  for (const char* root : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    struct statfs fs {};
    constexpr long kCgroup2Magic = 0x63677270;
    if (::statfs(root, &fs) == 0 && fs.f_type == kCgroup2Magic && ::access(root, W_OK) == 0) {
      return std::string(root);
    }
  }
  return std::nullopt;
}

std::vector<pid_t> cgroup_processes(const std::string& group) {
  std::vector<pid_t> pids;
  const std::string text = read_file(group + "/cgroup.procs");
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    pids.push_back(static_cast<pid_t>(std::stol(text.substr(at, end - at))));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return pids;
}

TEST(RunSignalsCgroup, SigtermToEachProcessOfTheCgroupArrivesOnce) {
  const std::optional<std::string> root = writable_cgroup2();
  if (!root) GTEST_SKIP() << "no cgroup v2 hierarchy this user may write to";
  const std::string group = *root + "/dprobe-test-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(group.c_str(), 0755), 0) << group;
  TempDir dir;
  {
    // Into the cgroup before dprobe starts: the collector is born in it.
    std::vector<std::string> args{"/bin/sh", "-c",
                                  "echo $$ > " + group + "/cgroup.procs && exec \"$@\"", "sh"};
    for (const std::string& arg : traced_senders()) args.push_back(arg);
    LiveProcess program(args, dir.file("out"), dir.file("err"));
    ASSERT_TRUE(program.wait_for_output("ready", patience(3))) << program.err();
    const std::vector<pid_t> members = cgroup_processes(group);
    EXPECT_EQ(members.size(), 2u) << "the program and dprobe's collector";
    for (const pid_t pid : members) ::kill(pid, SIGTERM);
    ASSERT_TRUE(eventually([&] { return !signals_taken(program.out()).empty(); }, patience(3)));
    program.signal(SIGUSR1);
    EXPECT_EQ(program.wait(patience(3)), std::optional<int>(0)) << program.err();
    EXPECT_THAT(signals_taken(program.out()), ElementsAre(from_us("SIGTERM")));
  }
  EXPECT_TRUE(eventually([&] { return cgroup_processes(group).empty(); }, patience(3)));
  EXPECT_EQ(::rmdir(group.c_str()), 0) << group;
}

}  // namespace
}  // namespace dprobe::integration
