// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// --trigger and --filter with `dprobe attach`, on tests/programs/analysis.c
// in its wait mode (it makes its calls when told, with SIGUSR1): the hist
// of exactly the calls made while attached, printed at detach, the program
// running on; and filters on common_pid, whose value (the process's id, the
// main thread's) is known before attaching.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "integration/analysis_support.h"
#include "integration/dprobe_run.h"
#include "integration/live_process.h"

namespace dprobe::integration {
namespace {

using analysis::analysis_path;
using analysis::calls_of;
using analysis::Hist;
using analysis::hitcounts_by_key;
using analysis::kSizes;
using analysis::log2_key;
using analysis::parse_hists;
using analysis::take_probe;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kThreads = 4;

// analysis_O2 with kThreads threads, waiting for its first SIGUSR1.
struct Waiting {
  explicit Waiting(const TempDir& dir)
      : process({analysis_path("O2"), std::to_string(kThreads), "wait"}, dir.file("analysis.out"),
                dir.file("analysis.err")) {
    ready = process.started() && process.wait_for_output("analysis: ready", patience(2));
  }
  std::string diagnostics() const { return process.out() + process.err(); }

  LiveProcess process;
  bool ready = false;
};

// dprobe attach with `options`, --probes to tell when its probes are
// armed (it lists them then).
std::vector<std::string> attach_command(pid_t pid, const std::vector<std::string>& options) {
  std::vector<std::string> args{
      DPROBE_BINARY, "attach",     "-p", std::to_string(pid),
      "-e",          take_probe(), "-e", "p:a/nap analysis_O2:nap ms=%di:s64",
      "--probes"};
  args.insert(args.end(), options.begin(), options.end());
  return args;
}

bool armed(const LiveProcess& attach) {
  return eventually(
      [&] {
        const std::string err = attach.err();
        return err.find("take+0x0/") != std::string::npos &&
               err.find("nap+0x0/") != std::string::npos;
      },
      patience(2));
}

// Whether the process has a handler for `sig` (SigCgt of /proc/PID/status):
// dprobe attach installs its SIGINT handler only after the probes are
// armed and listed, and a SIGINT before that would end it, not detach it.
bool catches(pid_t pid, int sig) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (!line.starts_with("SigCgt:")) continue;
    const uint64_t mask = std::stoull(line.substr(7), nullptr, 16);
    return (mask >> (sig - 1) & 1) != 0;
  }
  return false;
}

// The hist of the calls made while attached, printed when dprobe detaches
// (SIGINT), in the kernel's layout; the program then goes on to its end.
TEST(AnalysisAttach, TriggerPrintsTheHistAtDetach) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Waiting program(dir);
  ASSERT_TRUE(program.ready) << program.diagnostics();
  const pid_t pid = program.process.pid();

  LiveProcess attach(attach_command(pid, {"--trigger", "a/take:hist:keys=size.log2"}),
                     dir.file("attach.out"), dir.file("attach.err"));
  ASSERT_TRUE(attach.started());
  ASSERT_TRUE(armed(attach)) << attach.err();
  program.process.signal(SIGUSR1);
  ASSERT_TRUE(program.process.wait_for_output("analysis: worked", patience(2)))
      << program.diagnostics();
  // Nothing is printed before the end.
  EXPECT_THAT(attach.out(), Not(HasSubstr("# events/a/take/hist"))) << attach.out();
  ASSERT_TRUE(eventually([&] { return catches(attach.pid(), SIGINT); }, patience(2)))
      << attach.err();
  attach.signal(SIGINT);
  ASSERT_EQ(attach.wait(patience(6)), 0) << attach.err();

  const std::vector<Hist> hists = parse_hists(attach.out());
  ASSERT_EQ(hists.size(), 1u) << attach.out() << attach.err();
  std::map<std::string, uint64_t> expected;
  for (uint64_t size = 1; size <= kSizes; ++size)
    expected[log2_key(size)] += calls_of(size) * kThreads;
  EXPECT_EQ(hitcounts_by_key(hists[0]), expected) << hists[0];
  EXPECT_EQ(hists[0].hits, kThreads * analysis::take_calls_per_thread());
  EXPECT_EQ(hists[0].dropped, 0u);

  // Detached: the program naps and ends as it would have, untraced.
  program.process.signal(SIGUSR1);
  EXPECT_EQ(program.process.wait(patience(2)), 0) << program.diagnostics();
  EXPECT_THAT(program.process.out(), HasSubstr("analysis: ok\n"));
  EXPECT_TRUE(parse_trace(attach.out()).empty()) << "nap traced after the detach: " << attach.out();
}

// common_pid is the thread's id, as the kernel's: nap runs on the main
// thread, whose id is the process's, take on the others.
TEST(AnalysisAttach, CommonPidFilterNamesTheThread) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Waiting program(dir);
  ASSERT_TRUE(program.ready) << program.diagnostics();
  const pid_t pid = program.process.pid();
  const std::string id = std::to_string(pid);

  LiveProcess attach(
      attach_command(pid, {"--filter", "a/nap:common_pid == " + id, "--filter",
                           "a/take:common_pid != " + id + " && size == 1", "--profile"}),
      dir.file("attach.out"), dir.file("attach.err"));
  ASSERT_TRUE(attach.started());
  ASSERT_TRUE(armed(attach)) << attach.err();
  program.process.signal(SIGUSR1);
  ASSERT_TRUE(program.process.wait_for_output("analysis: worked", patience(2)))
      << program.diagnostics();
  program.process.signal(SIGUSR1);
  EXPECT_EQ(program.process.wait(patience(2)), 0) << program.diagnostics();
  // The process ended: dprobe ends too.
  ASSERT_EQ(attach.wait(patience(6)), 0) << attach.err();

  const std::vector<TraceLine> lines = parse_trace(attach.out());
  const std::vector<TraceLine> naps = lines_of(lines, "nap");
  ASSERT_EQ(naps.size(), 3u) << attach.out();
  for (const TraceLine& line : naps) EXPECT_EQ(line.tid, static_cast<uint64_t>(pid)) << line;
  const std::vector<TraceLine> takes = lines_of(lines, "take");
  EXPECT_EQ(takes.size(), calls_of(1) * kThreads)
      << "take(1, ...) on each thread but main: " << attach.out().substr(0, 4000);
  for (const TraceLine& line : takes) EXPECT_NE(line.tid, static_cast<uint64_t>(pid)) << line;
}

}  // namespace
}  // namespace dprobe::integration
