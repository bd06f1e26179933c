// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One field of a process's or a thread's /proc status file.
//
//   status_field("/proc/4242", "Tgid")            -> "4242"
//   status_field("/proc/4242/task/4250", "NSpid") -> "4250\t9"
#ifndef DPROBE_CLI_PROCESS_PROC_STATUS_H_
#define DPROBE_CLI_PROCESS_PROC_STATUS_H_

#include <string>
#include <string_view>

namespace dprobe::cli {

// The value of "Key:\tvalue" in DIR/status, blanks before it left out; ""
// when the file or the key is not there.
std::string status_field(const std::string& dir, std::string_view key);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_PROC_STATUS_H_
