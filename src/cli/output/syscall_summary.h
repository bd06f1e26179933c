// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// `--summary`: the system calls of a run counted in a table laid out as
// `strace -c` lays it out, so that whoever reads strace's table (a person or
// a script) reads dprobe's the same way. The time of a call is wall time from
// its entry to its exit, what `strace -c -w` counts.
//
//   errors << render_syscall_summary(std::move(counts));
#ifndef DPROBE_CLI_OUTPUT_SYSCALL_SUMMARY_H_
#define DPROBE_CLI_OUTPUT_SYSCALL_SUMMARY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dprobe::cli {

// One system call's count over the whole run.
struct SyscallCount {
  std::string name;
  uint64_t calls = 0;
  uint64_t errors = 0;    // the calls that returned an error
  uint64_t total_ns = 0;  // summed over the calls, entry to exit
};

// The name strace gives a system call, from its event's name: the event
// is named for the kernel's function ("newuname", "sendfile64"), strace
// for the system call ("uname", "sendfile").
std::string strace_syscall_name(std::string_view event_name);

// The strace -c table, every line '\n'-terminated, the most time first.
// Counts with calls == 0 are left out. Equal times keep the order given:
// strace breaks those ties by system call number, so pass the counts in that
// order to match it. With no call at all the text is empty, as strace prints
// no table then.
std::string render_syscall_summary(std::vector<SyscallCount> counts);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_OUTPUT_SYSCALL_SUMMARY_H_
