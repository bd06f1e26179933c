// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>

#include "cli/output/terminal_text.h"
#include "cli/process/pidfd.h"
#include "symbols/elf_file.h"

extern char** environ;

namespace dprobe::cli {
namespace {

// The program's environment: ours, with the agent first in LD_PRELOAD (in
// its place, when there is one: once the agent takes itself out, the
// program's environment is ours as it was, in order).
std::vector<std::string> child_environment(const std::string& agent, const std::string& socket,
                                           bool follow) {
  std::vector<std::string> env;
  bool preloaded = false;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("LD_PRELOAD=")) {
      if (preloaded) continue;
      preloaded = true;
      env.push_back("LD_PRELOAD=" + agent + (entry.size() > 11 ? ":" : "") +
                    std::string(entry.substr(11)));
      continue;
    }
    if (entry.starts_with(std::string(kControlEnv) + "=")) continue;
    if (entry.starts_with(std::string(kFollowEnv) + "=")) continue;
    env.emplace_back(entry);
  }
  if (!preloaded) env.push_back("LD_PRELOAD=" + agent);
  env.push_back(std::string(kControlEnv) + "=" + socket);
  if (follow) env.push_back(std::string(kFollowEnv) + "=1");
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// SIGPIPE's disposition when dprobe started, for the program.
struct sigaction g_sigpipe_before {};
bool g_sigpipe_changed = false;

}  // namespace

void ignore_sigpipe() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  g_sigpipe_changed = ::sigaction(SIGPIPE, &ignore, &g_sigpipe_before) == 0;
}

Result<void> check_traceable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail(path + ": command not found");
  }
  if (::access(path.c_str(), X_OK) != 0) return fail(path + ": " + std::strerror(errno));
  if (auto elf = symbols::ElfFile::open(path); elf && elf->interpreter().empty()) {
    return fail(path +
                " is statically linked: the dynamic loader, which preloads the agent, "
                "never runs in it");
  }
  if ((st.st_mode & (S_ISUID | S_ISGID)) != 0) {
    return fail(path + " is set-" + ((st.st_mode & S_ISUID) != 0 ? "uid" : "gid") +
                ": dprobe does not trace set-uid or set-gid programs (the loader ignores "
                "LD_PRELOAD for them, and their privileges must not reach a tracer)");
  }
  return {};
}

namespace {

// In the collector: what it must do before the program may start, then
// "ready" on `ready` (closed either way).
void get_ready(const std::function<void(pid_t)>& first, pid_t program, int ready) {
  first(program);
  const char byte = 1;
  (void)!::write(ready, &byte, 1);
  ::close(ready);
}

// In the middle process: until the collector closes its end.
void wait_for_close(int fd) {
  char byte;
  ssize_t got;
  do {
    got = ::read(fd, &byte, 1);
  } while (got < 0 && errno == EINTR);
  ::close(fd);
}

// In the program's process: whether the collector said it is ready (EOF:
// it died first).
bool collector_ready(int ready) {
  char byte = 0;
  ssize_t got;
  do {
    got = ::read(ready, &byte, 1);
  } while (got < 0 && errno == EINTR);
  ::close(ready);
  return got == 1;
}

}  // namespace

Result<RunSplit> split_for_run(const std::function<void(pid_t program)>& in_collector_first) {
  RunSplit split;
  split.program = ::getpid();
  // Under Yama's ptrace scope 1 a process may be ptraced by the one it
  // names and that one's descendants: the collector may follow the
  // program's start-up (startup_syscalls.h) while the middle process
  // keeps it a descendant (below). Where Yama is not, this fails harmlessly.
  ::prctl(PR_SET_PTRACER, split.program, 0, 0, 0);
  // Taken before the collector exists: the program's pid cannot be
  // another process's by the time the collector looks.
  split.program_fd = open_pidfd(split.program);
  if (split.program_fd < 0) return fail(std::string("pidfd_open: ") + std::strerror(errno));
  // A close-on-exec pipe tells the collector whether the exec worked: it
  // closes silently on success, and carries errno on failure. Another one
  // tells the program when the collector is ready for it.
  // The middle process waits for a third to close.
  int report[2];
  int ready[2];
  int held[2];
  if (::pipe2(report, O_CLOEXEC) != 0 || ::pipe2(ready, O_CLOEXEC) != 0 ||
      ::pipe2(held, O_CLOEXEC) != 0) {
    ::close(split.program_fd);
    return fail(std::string("pipe: ") + std::strerror(errno));
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t middle = ::fork();
  if (middle < 0) {
    const int error = errno;
    for (int fd : {split.program_fd, report[0], report[1], ready[0], ready[1], held[0], held[1]}) {
      ::close(fd);
    }
    return fail(std::string("fork: ") + std::strerror(error));
  }
  if (middle == 0) {
    const pid_t collector = ::fork();
    if (collector != 0) {
      ::close(held[1]);
      if (collector > 0) wait_for_close(held[0]);
      ::_exit(collector < 0 ? 1 : 0);
    }
    ::close(held[0]);
    ::close(report[1]);
    ::close(ready[0]);
    get_ready(in_collector_first, split.program, ready[1]);
    ::close(held[1]);
    split.collector = true;
    split.exec_report = report[0];
    return split;
  }
  ::close(held[0]);
  ::close(held[1]);
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  ::prctl(PR_SET_PTRACER, 0, 0, 0, 0);
  ::close(report[0]);
  ::close(ready[1]);
  ::close(split.program_fd);
  split.program_fd = -1;
  split.exec_report = report[1];
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !collector_ready(ready[0])) {
    ::close(report[1]);
    return fail("fork: the collector could not be started");
  }
  return split;
}

void exec_program(const RunSplit& split, const std::vector<std::string>& argv,
                  const std::string& executable, const std::string& agent,
                  const std::string& control_socket, bool follow) {
  std::vector<std::string> args = argv;
  std::vector<std::string> env = child_environment(agent, control_socket, follow);
  std::vector<char*> arg_ptrs = pointers(args);
  std::vector<char*> env_ptrs = pointers(env);
  if (g_sigpipe_changed) ::sigaction(SIGPIPE, &g_sigpipe_before, nullptr);
  ::execve(executable.c_str(), arg_ptrs.data(), env_ptrs.data());
  const int error = errno;
  (void)!::write(split.exec_report, &error, sizeof(error));
  const std::string message =
      "dprobe: error: " + printable(executable + ": " + std::strerror(error)) + "\n";
  (void)!::write(STDERR_FILENO, message.data(), message.size());
  ::_exit(127);
}

bool program_started(RunSplit& split) {
  int error = 0;
  ssize_t got;
  do {
    got = ::read(split.exec_report, &error, sizeof(error));
  } while (got < 0 && errno == EINTR);
  ::close(split.exec_report);
  split.exec_report = -1;
  return got != sizeof(error);
}

// Where an installed tree keeps the agent, from the directory of dprobe
// (set by the build: cmake/Packaging.cmake).
#ifndef DPROBE_AGENT_DIR_FROM_BIN
#define DPROBE_AGENT_DIR_FROM_BIN "../lib/dprobe"
#endif

// A library of dprobe's: next to the executable (the build tree), or where
// an installed tree keeps it; the first that exists.
static std::string library_path(const std::string& name) {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return name;
  const std::filesystem::path dir =
      std::filesystem::path(std::string(self, static_cast<size_t>(n))).parent_path();
  const std::filesystem::path beside = dir / name;
  const std::filesystem::path installed =
      (dir / DPROBE_AGENT_DIR_FROM_BIN / name).lexically_normal();
  if (::access(beside.c_str(), R_OK) != 0 && ::access(installed.c_str(), R_OK) == 0) {
    return installed.string();
  }
  return beside.string();
}

std::string agent_library_path() { return library_path("libdprobe_agent.so"); }

std::string attach_hook_path() { return library_path("libdprobe_attach.so"); }

}  // namespace dprobe::cli
