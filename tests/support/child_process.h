// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Running a program from a test as a user would: stdin from /dev/null,
// stdout and stderr each into a file of its own, in a process group of its
// own (a hang is ended with everything it started). For the integration
// tests (integration/dprobe_run.h, integration/live_process.h) and the unit
// tests that run the built dprobe.
//
//   const CapturedRun run = run_captured({"/bin/echo", "hi"}, patience());
//   EXPECT_EQ(run.status, 0) << run;                      // run.out == "hi\n"
//
//   TempDir dir;                                          // in the background:
//   const Spawned child = spawn_redirected(args, dir.file("out"), dir.file("err"));
//   std::optional<int> status = wait_for_exit(child.pid, patience());
#ifndef DPROBE_TESTS_SUPPORT_CHILD_PROCESS_H_
#define DPROBE_TESTS_SUPPORT_CHILD_PROCESS_H_

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/files.h"
#include "support/patience.h"

extern char** environ;

namespace dprobe::support {

// Polls `done` every 2 ms until it holds or `limit` has passed.
template <typename Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// A started process, or why posix_spawn could not start it.
struct Spawned {
  pid_t pid = -1;
  int error = 0;  // posix_spawn's: an errno value
  bool ok() const { return pid > 0; }
};

// Starts args[0] (a path) with `args` and the environment `env`: stdin from
// /dev/null, stdout and stderr into the files named (created, or
// truncated), in a process group of its own, so that kill(-pid) ends it
// with everything it started.
inline Spawned spawn_redirected(const std::vector<std::string>& args, const std::string& out_path,
                                const std::string& err_path, char* const* env = environ) {
  Spawned spawned;
  if (args.empty()) {
    spawned.error = EINVAL;
    return spawned;
  }
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  spawned.error = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), env);
  if (spawned.error == 0) spawned.pid = pid;
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return spawned;
}

// A wait status as a shell says it: the exit status, or 128 + the signal
// that ended the process.
inline int exit_status(int wstatus) {
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

// The exit status of the child `pid` (exit_status), once it has ended
// within `limit`; -1 when it cannot be waited for (not a child, reaped
// already); nullopt while it still runs.
inline std::optional<int> wait_for_exit(pid_t pid, std::chrono::milliseconds limit) {
  int wstatus = 0;
  pid_t done = 0;
  if (!eventually([&] { return (done = ::waitpid(pid, &wstatus, WNOHANG)) != 0; }, limit)) {
    return std::nullopt;
  }
  return done == pid ? exit_status(wstatus) : -1;
}

// A process as its /proc/PID/stat shows it.
struct ProcessStat {
  pid_t pid = 0;
  std::string comm;
  char state = 0;  // 'R', 'S', 'Z', ...
  long parent = 0;
  long group = 0;
  bool live() const { return state != 'Z' && state != 'X'; }
};

// Every process of the system, as far as /proc shows them now.
inline std::vector<ProcessStat> all_processes() {
  std::vector<ProcessStat> processes;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return processes;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    const std::string stat = read_file(std::string("/proc/") + entry->d_name + "/stat");
    const size_t open = stat.find('(');
    const size_t close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    ProcessStat process;
    process.pid = static_cast<pid_t>(std::atol(entry->d_name));
    process.comm = stat.substr(open + 1, close - open - 1);
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld", &process.state, &process.parent,
                    &process.group) == 3) {
      processes.push_back(std::move(process));
    }
  }
  ::closedir(proc);
  return processes;
}

// Whether a process of group `pgid` still runs. A zombie does not count:
// an orphan waits for init to reap it, which some inits do only every
// few seconds.
inline bool group_alive(pid_t pgid) {
  if (::kill(-pgid, 0) != 0 && errno != EPERM) return false;
  for (const ProcessStat& process : all_processes()) {
    if (process.group == pgid && process.live()) return true;
  }
  return false;
}

// How a program run to its end went, and what it wrote.
struct CapturedRun {
  bool started = false;
  bool timed_out = false;  // killed after the time limit: always a failure
  int status = -1;         // exit status; 128 + signal when killed by one
  std::string out;
  std::string err;
};

// A long stderr shows its head and its tail: the reason a run failed is
// often its last line, after thousands of listed probes.
inline std::ostream& operator<<(std::ostream& os, const CapturedRun& run) {
  constexpr size_t kHead = 4000;
  constexpr size_t kTail = 2000;
  os << "started=" << run.started << " timed_out=" << run.timed_out << " status=" << run.status
     << "\n--- stderr ---\n"
     << run.err.substr(0, kHead);
  if (run.err.size() > kHead + kTail) {
    os << "\n[... " << run.err.size() - kHead - kTail << " bytes ...]\n"
       << run.err.substr(run.err.size() - kTail);
  } else if (run.err.size() > kHead) {
    os << run.err.substr(kHead);
  }
  os << "\n--- stdout (first 4000 bytes) ---\n" << run.out.substr(0, 4000);
  return os;
}

// Runs `args` (spawn_redirected) to its end, and what it left in its
// process group too: `dprobe run` becomes the program, and its collector,
// beside it, may write the last of the trace just after the program died
// of a signal (cli/process/launcher.h). Past `limit` the process group is
// killed and timed_out set. stdout goes to `stdout_path` when given, else
// to a file of its own. The limit only ends a hang: no test asserts on
// how long a run takes.
inline CapturedRun run_captured(const std::vector<std::string>& args,
                                std::chrono::milliseconds limit,
                                const std::string& stdout_path = {}, char* const* env = environ) {
  CapturedRun run;
  TempDir dir;
  if (!dir.ok()) return run;
  const std::string out_path = stdout_path.empty() ? dir.file("stdout") : stdout_path;
  const std::string err_path = dir.file("stderr");
  const Spawned child = spawn_redirected(args, out_path, err_path, env);
  if (!child.ok()) {
    run.err = "posix_spawn " + (args.empty() ? std::string() : args[0]) + ": " +
              std::to_string(child.error);
    return run;
  }
  run.started = true;
  const auto started = std::chrono::steady_clock::now();
  const auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        limit - (std::chrono::steady_clock::now() - started));
  };
  const std::optional<int> status = wait_for_exit(child.pid, limit);
  if (status) run.status = *status;
  if (!status || !eventually([&] { return !group_alive(child.pid); }, left())) {
    run.timed_out = true;
    ::kill(-child.pid, SIGKILL);
    if (!status) ::waitpid(child.pid, nullptr, 0);
  }
  run.out = read_file(out_path);
  run.err = read_file(err_path);
  return run;
}

}  // namespace dprobe::support

#endif  // DPROBE_TESTS_SUPPORT_CHILD_PROCESS_H_
