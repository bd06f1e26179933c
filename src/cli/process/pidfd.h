// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A process's pidfd: readable once the process has ended, whether or not
// it is our child (`run`'s program is the shell's child, not dprobe's).
// The system call itself: glibc 2.36's <sys/pidfd.h> declares pidfd_open
// without C linkage, which a C++ program cannot link against.
#ifndef DPROBE_CLI_PROCESS_PIDFD_H_
#define DPROBE_CLI_PROCESS_PIDFD_H_

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace dprobe::cli {

// -1 with errno set (ESRCH: no such process) on failure; close-on-exec.
inline int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_PIDFD_H_
