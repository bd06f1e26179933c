// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Where dprobe puts its control socket and the files a process loads from
// it (the attach hook): a directory no other user can change. As root with
// another user's XDG_RUNTIME_DIR still set (su without -, sudo -E), that
// user could otherwise swap the directory under dprobe and have root write
// through a symlink, or load a library of theirs.
//
// A directory is trusted for `uid` when it is owned by `uid` and no group or
// other may write to it, and every directory above it is owned by root or
// `uid` and writable by no one else (unless sticky, as /tmp is: then no one
// else may rename what is in it). XDG_RUNTIME_DIR is used when trusted;
// otherwise /tmp/dprobe-<uid>, made 0700 and checked the same way.
//
//   auto base = private_runtime_dir(::geteuid());
//   if (!base) report(base.error().message);
#ifndef DPROBE_CLI_PROCESS_PRIVATE_DIR_H_
#define DPROBE_CLI_PROCESS_PRIVATE_DIR_H_

#include <sys/types.h>

#include <string>

#include "base/result.h"

namespace dprobe::cli {

// Checks an open directory: owned by `uid`, no group or other write.
Result<void> check_private(int dir_fd, uid_t uid);

// Opens `path` (absolute, no symlink anywhere in it) if it is trusted for
// `uid`; the descriptor is close-on-exec.
Result<int> open_trusted_directory(const std::string& path, uid_t uid);

// The directory to make dprobe's session directories in: XDG_RUNTIME_DIR
// when trusted, else /tmp/dprobe-<uid> (created 0700 if missing).
Result<std::string> private_runtime_dir(uid_t uid);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_PRIVATE_DIR_H_
