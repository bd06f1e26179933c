// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Paths as another process sees them. A process in a container has a root
// of its own: "/usr/lib/libssl.so.3" in it is "/proc/PID/root/usr/lib/
// libssl.so.3" to dprobe (the kernel's magic link to the process's root,
// which works whatever its mount namespace). An executable named through
// such a root ("/proc/1234/root/app") has its interpreter, libraries and
// ld.so.conf looked up in that root, as its loader looked them up.
//
//   root_of("/proc/1234/root/app") == "/proc/1234/root"
//   under_root("/proc/1234/root", "/lib/libc.so.6") == "/proc/1234/root/lib/libc.so.6"
#ifndef DPROBE_SYMBOLS_ROOTED_PATH_H_
#define DPROBE_SYMBOLS_ROOTED_PATH_H_

#include <string>
#include <string_view>

namespace dprobe::symbols {

// "/proc/PID/root" when `path` lies under a process's root, else "".
std::string root_of(std::string_view path);

// `path` (as the process sees it) as dprobe opens it: below `root` unless
// it is there already or `root` is empty. A relative path is left as is.
std::string under_root(std::string_view root, std::string_view path);

// `path` (below `root`, or anywhere when `root` is empty) with every
// symlink resolved the way the process would resolve it: an absolute link
// starts again from `root`, never from dprobe's own root. `path` itself
// when a part of it does not exist.
std::string canonical_under(std::string_view root, const std::string& path);

}  // namespace dprobe::symbols

#endif  // DPROBE_SYMBOLS_ROOTED_PATH_H_
