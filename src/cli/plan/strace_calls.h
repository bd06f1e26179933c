// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Which system calls --format strace traces, and the events it makes for
// them. --syscalls takes what strace's -e trace= takes: call names (the
// C library's, `stat`, or the kernel's event names, `newstat`; globs as
// the kernel's, `open*`), classes (%file, %process, %network, %signal,
// %memory, %desc, %ipc, %creds, %clock), `all`, and a leading `!` for
// every call but those. For each call chosen there is an event probe on
// its enter event that records every argument and copies the strings the
// call reads (file names) at the call, and the call's own exit event.
//
//   auto calls = select_syscalls("%file,read", arch::Isa::kX86_64);  // Result<...>
//   for (std::string& def : strace_definitions(*calls)) sources.expressions.push_back(def);
#ifndef DPROBE_CLI_PLAN_STRACE_CALLS_H_
#define DPROBE_CLI_PLAN_STRACE_CALLS_H_

#include <string>
#include <string_view>
#include <vector>

#include "arch/isa.h"
#include "base/result.h"
#include "syscalls/syscall_table.h"

namespace dprobe::cli::strace {

// The group of the enter events --format strace makes, and the suffix
// of the field that holds an argument's string ("filename_str"). A call
// whose buffer the kernel fills has an exit event probe of its own too
// (kExitGroup), which copies the buffer then.
inline constexpr std::string_view kEnterGroup = "strace";
inline constexpr std::string_view kExitGroup = "strace_exit";
inline constexpr std::string_view kStringSuffix = "_str";

// A call whose data strace prints as a string: the buffer it writes from
// (copied at entry), or the one the kernel fills (copied at exit, from the
// argument's register, which the call leaves as it was); `length` is the
// argument that bounds it at entry, the result at exit. The copy is
// `buffer_bytes` long, in fields of kBufferField bytes, "buf_data0", ...
struct BufferCall {
  std::string_view call;
  uint8_t buffer;
  uint8_t length;
  bool filled;
};
const BufferCall* buffer_call(std::string_view name);
inline constexpr std::string_view kDataSuffix = "_data";
inline constexpr size_t kBufferField = 64;  // the language's longest array
inline constexpr size_t kMaxBufferBytes = 1024;
size_t buffer_bytes(size_t string_limit);

// An argument that names a file: strace prints it in full, never cut at
// the string limit, and a call with one is in %file.
bool is_path_argument(std::string_view name);

// Whether argument `index` of `info` is a NUL-terminated string the call
// reads, which the enter event copies: file names, xattr names, key
// types. Buffers with a length (write's) are BufferCall's.
bool fetches_string(const syscalls::SyscallInfo& info, size_t index);

// The calls `spec` names, in number order; an unknown name or class is an
// error naming it. Empty `spec`: every call.
Result<std::vector<const syscalls::SyscallInfo*>> select_syscalls(std::string_view spec,
                                                                  arch::Isa isa);

// The definitions that trace `calls` for --format strace, one enter event
// probe and one exit event each; buffers copied up to `string_limit`
// bytes (at most kMaxBufferBytes).
std::vector<std::string> strace_definitions(const std::vector<const syscalls::SyscallInfo*>& calls,
                                            size_t string_limit, arch::Isa isa);

}  // namespace dprobe::cli::strace

#endif  // DPROBE_CLI_PLAN_STRACE_CALLS_H_
