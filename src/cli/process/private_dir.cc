// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/private_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace dprobe::cli {
namespace {

constexpr mode_t kOthersWrite = S_IWGRP | S_IWOTH;

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// A directory above the one we use: whoever may rename entries in it could
// swap what lies below.
Result<void> check_ancestor(const std::string& path, uid_t uid) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return fail(errno_text(path));
  if (!S_ISDIR(st.st_mode)) return fail(path + " is not a directory (a symlink?)");
  if (st.st_uid != 0 && st.st_uid != uid) {
    return fail(path + " belongs to uid " + std::to_string(st.st_uid));
  }
  if ((st.st_mode & kOthersWrite) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return fail(path + " is writable by other users");
  }
  return {};
}

Result<void> check_ancestors(const std::string& path, uid_t uid) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    if (auto ok = check_ancestor(path.substr(0, slash), uid); !ok) return ok;
  }
  return check_ancestor("/", uid);
}

Result<std::string> fallback_dir(uid_t uid) {
  const std::string dir = "/tmp/dprobe-" + std::to_string(uid);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return fail(errno_text(dir));
  auto fd = open_trusted_directory(dir, uid);
  if (!fd) {
    return fail(fd.error().message + " (dprobe's private directory; remove it and try again)");
  }
  ::close(*fd);
  return dir;
}

}  // namespace

Result<void> check_private(int dir_fd, uid_t uid) {
  struct stat st {};
  if (::fstat(dir_fd, &st) != 0) return fail(errno_text("fstat"));
  if (!S_ISDIR(st.st_mode)) return fail("not a directory");
  if (st.st_uid != uid) return fail("owned by uid " + std::to_string(st.st_uid));
  if ((st.st_mode & kOthersWrite) != 0) return fail("writable by group or others");
  return {};
}

Result<int> open_trusted_directory(const std::string& path, uid_t uid) {
  if (path.empty() || path[0] != '/' || path.find("/../") != std::string::npos ||
      path.ends_with("/..")) {
    return fail(path + ": not an absolute, plain path");
  }
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  if (auto ok = check_ancestors(trimmed, uid); !ok) return unexpected(ok.error());
  const int fd = ::open(trimmed.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fail(errno_text(trimmed));
  if (auto ok = check_private(fd, uid); !ok) {
    ::close(fd);
    return fail(trimmed + ": " + ok.error().message);
  }
  return fd;
}

Result<std::string> private_runtime_dir(uid_t uid) {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && *xdg != '\0') {
    if (auto fd = open_trusted_directory(xdg, uid)) {
      ::close(*fd);
      return std::string(xdg);
    }
  }
  return fallback_dir(uid);
}

}  // namespace dprobe::cli
