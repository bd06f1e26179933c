// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's first system call in a program that `dprobe run` started:
// a call the kernel always refuses (Syscall User Dispatch turned off with
// a non-zero offset is EINVAL, and changes nothing), so that the collector,
// which follows the program's start-up calls through ptrace, knows where
// the program's calls end and the agent's begin (cli/process/
// startup_syscalls.h). No program makes it: its third argument spells
// "dprb".
//
//   prctl(kStartupMarkerOption, kStartupMarkerMode, kStartupMarkerMagic, 0, 0)
#ifndef DPROBE_PROTOCOL_STARTUP_MARKER_H_
#define DPROBE_PROTOCOL_STARTUP_MARKER_H_

#include <cstdint>

namespace dprobe::protocol {

inline constexpr uint64_t kStartupMarkerOption = 59;  // PR_SET_SYSCALL_USER_DISPATCH
inline constexpr uint64_t kStartupMarkerMode = 0;     // PR_SYS_DISPATCH_OFF
inline constexpr uint64_t kStartupMarkerMagic = 0x64707262;

}  // namespace dprobe::protocol

#endif  // DPROBE_PROTOCOL_STARTUP_MARKER_H_
