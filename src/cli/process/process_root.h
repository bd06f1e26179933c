// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A process's file system as dprobe reaches it. A process in a container
// (its own mount namespace, or a chroot) names its files from a root of
// its own, which dprobe reaches through /proc/PID/root whatever mounts it
// has (symbols/rooted_path.h): its program is then named below that root,
// so that its libraries and probes' objects are found in it.
//
//   if (!shares_our_root(pid)) ... deliver the agent by descriptor
//   std::string program = program_of(pid);   // "/proc/PID/root/app"
#ifndef DPROBE_CLI_PROCESS_PROCESS_ROOT_H_
#define DPROBE_CLI_PROCESS_PROCESS_ROOT_H_

#include <sys/types.h>

#include <string>

namespace dprobe::cli {

// Whether `pid` has our root in our mount namespace: a path means the same
// file to it as to dprobe.
bool shares_our_root(pid_t pid);

// The program `pid` runs, as dprobe opens it: the path /proc/PID/exe
// names when the process shares our root; otherwise the program's path in
// its own root, below /proc/PID/root (or /proc/PID/exe itself when that
// path cannot be found). Empty for an exited process.
std::string program_of(pid_t pid);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_PROCESS_ROOT_H_
