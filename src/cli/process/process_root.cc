// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/process_root.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace dprobe::cli {
namespace {

bool same_file(const std::string& a, const std::string& b) {
  struct stat first {};
  struct stat second {};
  return ::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 &&
         first.st_dev == second.st_dev && first.st_ino == second.st_ino;
}

std::string link_of(const std::string& path) {
  char target[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof(target) - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

}  // namespace

bool shares_our_root(pid_t pid) {
  // A thread's view: a main thread that has exited (pthread_exit) shows
  // no root, its process's live threads do. Namespace links compare by
  // inode, as the kernel's ns ids do.
  std::error_code ec;
  const std::string proc = "/proc/" + std::to_string(pid);
  for (const auto& task : std::filesystem::directory_iterator(proc + "/task", ec)) {
    struct stat root {};
    if (::stat((task.path() / "root").c_str(), &root) != 0) continue;
    return same_file(task.path() / "root", "/") &&
           same_file(task.path() / "ns/mnt", "/proc/self/ns/mnt");
  }
  return same_file(proc + "/root", "/") && same_file(proc + "/ns/mnt", "/proc/self/ns/mnt");
}

std::string program_of(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::string exe = link_of(proc + "/exe");
  if (exe.empty() || shares_our_root(pid)) return exe;
  // The kernel names the program from our root when it can reach it
  // (a chroot below ours: "/srv/root/app", the root being "/srv/root"),
  // else from the process's own root ("/app").
  const std::string root = proc + "/root";
  const std::string root_link = link_of(root);
  std::string inside = exe;
  if (root_link.size() > 1 && exe.starts_with(root_link + "/")) {
    inside = exe.substr(root_link.size());
  }
  if (same_file(root + inside, proc + "/exe")) return root + inside;
  return proc + "/exe";
}

}  // namespace dprobe::cli
