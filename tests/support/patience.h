// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// How long a test waits for something before it calls it a hang, derived
// from how fast this machine is in this run rather than guessed: the time
// it takes to start a process and reap it (what every step of these tests
// pays: a dprobe, a program, an attach), measured once per test process,
// times how many such steps the wait allows. A machine twice as busy
// waits twice as long; an idle one still fails a real hang in seconds.
//
//   EXPECT_TRUE(eventually([&] { return seen(); }, patience()));       // a few steps
//   EXPECT_TRUE(eventually([&] { return done(); }, patience(20)));     // twenty times that
#ifndef DPROBE_TESTS_SUPPORT_PATIENCE_H_
#define DPROBE_TESTS_SUPPORT_PATIENCE_H_

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>

extern char** environ;

namespace dprobe::support {

// The median time, over five tries, to posix_spawn /bin/true and reap it.
inline std::chrono::microseconds process_start_cost() {
  std::array<std::chrono::microseconds, 5> costs{};
  for (auto& cost : costs) {
    const auto start = std::chrono::steady_clock::now();
    char arg0[] = "/bin/true";
    char* argv[] = {arg0, nullptr};
    pid_t pid = 0;
    if (::posix_spawn(&pid, arg0, nullptr, nullptr, argv, environ) == 0) {
      ::waitpid(pid, nullptr, 0);
    }
    cost = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  }
  std::sort(costs.begin(), costs.end());
  return costs[costs.size() / 2];
}

// Steps a default wait allows: a process start costs about 1 ms on an
// idle 2-core machine, so one patience() is about 10 s there.
inline constexpr int kStepsPerPatience = 10000;

// `times` default waits, scaled by this run's process start cost (at
// least 1 ms of it: a cached fast spawn must not shrink the waits below
// what the slower steps of a test need).
// Never past what ctest gives a whole test (scripts/test.sh's --timeout
// 600): a wait that long fails with the test's own message first.
inline constexpr std::chrono::milliseconds kLongestWait{540'000};

inline std::chrono::milliseconds patience(int times = 1) {
  static const std::chrono::microseconds cost =
      std::max(process_start_cost(), std::chrono::microseconds(1000));
  return std::min(kLongestWait, std::chrono::duration_cast<std::chrono::milliseconds>(
                                    cost * kStepsPerPatience * times));
}

}  // namespace dprobe::support

#endif  // DPROBE_TESTS_SUPPORT_PATIENCE_H_
