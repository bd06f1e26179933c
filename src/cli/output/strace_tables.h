// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The names strace gives the flags and constants of the common system
// calls, with their x86_64 and generic values from the kernel's uapi
// headers (asm-generic/fcntl.h, asm-generic/mman-common.h, linux/sched.h,
// linux/fcntl.h, ...). Each table is in the order strace prints the names
// of a set: a name of several bits before the single bits it covers.
//
//   flags_text(flags, kOpenFlags);   // "O_RDONLY|O_CREAT|O_CLOEXEC"
#ifndef DPROBE_CLI_OUTPUT_STRACE_TABLES_H_
#define DPROBE_CLI_OUTPUT_STRACE_TABLES_H_

#include <span>

#include "cli/output/strace_values.h"

namespace dprobe::cli::strace {

extern const std::span<const Named> kOpenAccessModes;  // O_RDONLY, O_WRONLY, O_RDWR
extern const std::span<const Named> kOpenFlags;        // O_CREAT ... (no access mode)
extern const std::span<const Named> kProtFlags;        // PROT_*
extern const std::span<const Named> kMapTypes;         // MAP_SHARED, MAP_PRIVATE, ...
extern const std::span<const Named> kMapFlags;         // MAP_FIXED ... (no type)
extern const std::span<const Named> kMremapFlags;      // MREMAP_*
extern const std::span<const Named> kAccessModes;      // F_OK, R_OK, W_OK, X_OK
extern const std::span<const Named> kAtFlags;          // AT_SYMLINK_NOFOLLOW ...
extern const std::span<const Named> kFcntlCommands;    // F_DUPFD ...
extern const std::span<const Named> kFdFlags;          // FD_CLOEXEC
extern const std::span<const Named> kCloneFlags;       // CLONE_* (the exit signal apart)
extern const std::span<const Named> kSigprocmaskHows;  // SIG_BLOCK ...
extern const std::span<const Named> kSeekWhences;      // SEEK_*
extern const std::span<const Named> kFadviseAdvice;    // POSIX_FADV_*
extern const std::span<const Named> kMadviseAdvice;    // MADV_*
extern const std::span<const Named> kArchPrctlCodes;   // ARCH_*
extern const std::span<const Named> kAddressFamilies;  // AF_*
extern const std::span<const Named> kSocketTypes;      // SOCK_STREAM ...
extern const std::span<const Named> kSocketFlags;      // SOCK_NONBLOCK, SOCK_CLOEXEC
extern const std::span<const Named> kResources;        // RLIMIT_*
extern const std::span<const Named> kWaitOptions;      // WNOHANG ...
extern const std::span<const Named> kFutexCommands;    // FUTEX_WAIT ... (no flags)
extern const std::span<const Named> kCloseRangeFlags;  // CLOSE_RANGE_*
extern const std::span<const Named> kGetrandomFlags;   // GRND_*
extern const std::span<const Named> kIoctlCommands;    // the terminal's and FIO*

}  // namespace dprobe::cli::strace

#endif  // DPROBE_CLI_OUTPUT_STRACE_TABLES_H_
