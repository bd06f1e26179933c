// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "symbols/elf_file.h"

extern char** environ;

namespace dprobe::cli {
namespace {

// The child's environment: ours, with the agent first in LD_PRELOAD.
std::vector<std::string> child_environment(const std::string& agent, const std::string& socket,
                                           bool follow) {
  std::vector<std::string> env;
  std::string preload = "LD_PRELOAD=" + agent;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("LD_PRELOAD=")) {
      if (entry.size() > 11) preload += ":" + std::string(entry.substr(11));
      continue;
    }
    if (entry.starts_with(std::string(kControlEnv) + "=")) continue;
    if (entry.starts_with(std::string(kFollowEnv) + "=")) continue;
    env.emplace_back(entry);
  }
  env.push_back(preload);
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

Result<pid_t> launch(const std::vector<std::string>& argv, const std::string& executable,
                     const std::string& agent, const std::string& control_socket, bool follow) {
  std::vector<std::string> args = argv;
  std::vector<std::string> env = child_environment(agent, control_socket, follow);
  std::vector<char*> arg_ptrs = pointers(args);
  std::vector<char*> env_ptrs = pointers(env);
  // A close-on-exec pipe tells the parent whether exec worked: it closes
  // silently on success, and carries errno on failure.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) return fail(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(report[0]);
    if (g_sigpipe_changed) ::sigaction(SIGPIPE, &g_sigpipe_before, nullptr);
    ::execve(executable.c_str(), arg_ptrs.data(), env_ptrs.data());
    const int error = errno;
    (void)!::write(report[1], &error, sizeof(error));
    ::_exit(127);
  }
  ::close(report[1]);
  int error = 0;
  ssize_t got;
  do {
    got = ::read(report[0], &error, sizeof(error));
  } while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (got == sizeof(error)) return fail(executable + ": " + std::strerror(error));
  return pid;
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
