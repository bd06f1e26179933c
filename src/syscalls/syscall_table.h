// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The kernel's system call events as data: for each system call, its
// number, the name of its syscalls:sys_enter_NAME event, and its arguments'
// types and names, as the kernel's tracefs format files give them. The
// x86_64 table, data/syscalls/x86_64.inc, is captured from a running kernel
// by scripts/capture-syscall-formats.sh (as root: it reads every
// events/syscalls/sys_enter_*/format, and the numbers from the uapi
// header); to refresh it, run the script on the newer kernel and check the
// file in. tests/unit/syscalls compares every format this module writes
// with the machine's own. arm64 has no captured table yet: its kernel's
// formats would be captured the same way, from the arm64 selftest guest.
//
//   const SyscallInfo* open = find_syscall(arch::Isa::kX86_64, "openat");  // nr 257
//   std::string text = syscall_format(*open, /*exit=*/false, 782);  // = the format file
#ifndef DPROBE_SYSCALLS_SYSCALL_TABLE_H_
#define DPROBE_SYSCALLS_SYSCALL_TABLE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch/isa.h"

namespace dprobe::syscalls {

// One argument as its format file's `field:TYPE NAME;` line has it.
struct SyscallArg {
  const char* type;  // "const char *": may hold spaces and '*'
  const char* name;
};

struct SyscallInfo {
  int nr;
  const char* name;  // the event's, after sys_enter_: "newstat" for stat (4)
  uint8_t arg_count;
  SyscallArg args[6];
};

// Every system call that has events, sorted by number; empty for an ISA
// with no captured table (arm64 for now).
std::span<const SyscallInfo> syscall_table(arch::Isa isa);

// By event name ("openat"), or nullptr.
const SyscallInfo* find_syscall(arch::Isa isa, std::string_view name);
// By number, or nullptr for a number with no events.
const SyscallInfo* syscall_by_nr(arch::Isa isa, long nr);

// Every system call whose name matches a shell glob ('*', '?'), as the
// kernel's event globs, in number order. The glob is on the bare name:
// "open*", not "sys_enter_open*".
std::vector<const SyscallInfo*> match_syscalls(arch::Isa isa, std::string_view glob);

// The text of events/syscalls/sys_enter_NAME/format (exit false) or
// sys_exit_NAME/format, byte for byte as tracefs shows it, with `id` on its
// ID: line (the kernel numbers events at boot).
std::string syscall_format(const SyscallInfo& info, bool exit, uint32_t id);
// The same for events/raw_syscalls/sys_enter and sys_exit.
std::string raw_syscall_format(bool exit, uint32_t id);

}  // namespace dprobe::syscalls

#endif  // DPROBE_SYSCALLS_SYSCALL_TABLE_H_
