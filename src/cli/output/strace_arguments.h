// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One system call's arguments and result as strace prints them
// (--format strace): the flags of the common calls by name, AT_FDCWD,
// strings quoted (file names in full, other strings cut at the string
// limit, as strace's -s), pointers as addresses or NULL, errors as
// "-1 ENOENT (No such file or directory)". A call's arguments are the
// registers at its entry, as the kernel's syscall events record them, and
// the strings fetched there; the data of read and write and their
// like, copied at entry (what the call writes) or exit (what it read).
//
//   SyscallCall call{.info = find_syscall(Isa::kX86_64, "openat")};
//   call.args = {AT_FDCWD_bits, ptr, 0x80000, 0};  call.strings[1] = "/etc/hostname";
//   arguments_text(call, 32);   // "AT_FDCWD, \"/etc/hostname\", O_RDONLY|O_CLOEXEC"
//   result_text(call, -2);      // "-1 ENOENT (No such file or directory)"
#ifndef DPROBE_CLI_OUTPUT_STRACE_ARGUMENTS_H_
#define DPROBE_CLI_OUTPUT_STRACE_ARGUMENTS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "syscalls/syscall_table.h"

namespace dprobe::cli::strace {

inline constexpr size_t kDefaultStringLimit = 32;  // strace's -s
// A record holds at most 64 KiB: no string it copies is longer.
inline constexpr size_t kMaxStringLimit = 65536;

struct SyscallCall {
  const syscalls::SyscallInfo* info = nullptr;
  std::array<uint64_t, 6> args{};
  // An argument the record did not hold prints as "?".
  std::array<bool, 6> has_arg{true, true, true, true, true, true};
  // The string an argument points to, copied at the call; nullopt where
  // none was fetched or the read faulted (the address prints instead).
  std::array<std::optional<std::string>, 6> strings;
  // A buffer's bytes (strace_calls.h's BufferCall), copied at entry or
  // exit, and how many of them the call wrote or read (its length
  // argument, or its result); it prints as a string, the address when
  // there is none (the call failed, or nothing was copied).
  std::optional<std::string> buffer;
  uint64_t buffer_length = 0;
};

// strace's name of a call: the C library's where the kernel's event name
// differs (newfstat is fstat, sendfile64 sendfile, umount umount2).
std::string call_name(const syscalls::SyscallInfo& info);

// The arguments between the parentheses; those from `first` on, where
// strace prints a line in two parts (a buffer the kernel fills comes at
// the exit).
std::string arguments_text(const SyscallCall& call, size_t string_limit, size_t first = 0,
                           size_t last = 6);

// Calls that never return to the caller when they succeed (exit,
// exit_group): strace prints their result as "?".
bool never_returns(const syscalls::SyscallInfo& info);

// What follows "= ": the result in decimal (hex for calls that return an
// address: mmap, brk, ...), or -1 and the error.
std::string result_text(const SyscallCall& call, int64_t ret);

}  // namespace dprobe::cli::strace

#endif  // DPROBE_CLI_OUTPUT_STRACE_ARGUMENTS_H_
