// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/output/strace_arguments.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "cli/output/strace_tables.h"
#include "cli/output/strace_values.h"
#include "cli/plan/strace_calls.h"

namespace dprobe::cli::strace {
namespace {

// How one argument prints.
enum class Kind : uint8_t {
  kByType,  // by its C type: pointer, signed or unsigned decimal
  kFd,
  kDirFd,
  kPointer,
  kHex,
  kOctal,
  kOpenFlags,
  kOpenBits,  // O_CLOEXEC, O_NONBLOCK ... without the access mode: pipe2, dup3
  kProt,
  kMapFlags,
  kMremapFlags,
  kAccessMode,
  kAtFlags,
  kFcntlCommand,
  kSignal,
  kSigHow,
  kWhence,
  kFadvise,
  kMadvise,
  kArchPrctl,
  kFamily,
  kSocketType,
  kSocketFlags,
  kResource,
  kWaitOptions,
  kFutexOp,
  kCloseRange,
  kGetrandom,
  kIoctl,
};

// An argument of one call (or of every call: call ""), by the kernel's
// argument name.
struct Rule {
  std::string_view call;
  std::string_view arg;
  Kind kind;
};

constexpr Rule kRules[] = {
    {"", "fd", Kind::kFd},
    {"", "oldfd", Kind::kFd},
    {"", "newfd", Kind::kFd},
    {"", "fildes", Kind::kFd},
    {"", "out_fd", Kind::kFd},
    {"", "in_fd", Kind::kFd},
    {"", "fd_in", Kind::kFd},
    {"", "fd_out", Kind::kFd},
    {"", "epfd", Kind::kFd},
    {"", "ufd", Kind::kFd},
    {"", "pidfd", Kind::kFd},
    {"", "dfd", Kind::kDirFd},
    {"", "olddfd", Kind::kDirFd},
    {"", "newdfd", Kind::kDirFd},
    {"", "addr", Kind::kPointer},
    {"", "start", Kind::kPointer},
    {"", "new_addr", Kind::kPointer},
    {"brk", "brk", Kind::kPointer},
    {"pipe", "fildes", Kind::kPointer},
    {"pipe2", "fildes", Kind::kPointer},
    {"pipe2", "flags", Kind::kOpenBits},
    {"dup3", "flags", Kind::kOpenBits},
    {"open", "flags", Kind::kOpenFlags},
    {"openat", "flags", Kind::kOpenFlags},
    {"open", "mode", Kind::kOctal},
    {"openat", "mode", Kind::kOctal},
    {"creat", "mode", Kind::kOctal},
    {"mkdir", "mode", Kind::kOctal},
    {"mkdirat", "mode", Kind::kOctal},
    {"chmod", "mode", Kind::kOctal},
    {"fchmod", "mode", Kind::kOctal},
    {"fchmodat", "mode", Kind::kOctal},
    {"fchmodat2", "mode", Kind::kOctal},
    {"mknod", "mode", Kind::kOctal},
    {"mknodat", "mode", Kind::kOctal},
    {"umask", "mask", Kind::kOctal},
    {"mmap", "prot", Kind::kProt},
    {"mprotect", "prot", Kind::kProt},
    {"pkey_mprotect", "prot", Kind::kProt},
    {"mmap", "flags", Kind::kMapFlags},
    {"mmap", "fd", Kind::kFd},
    {"mmap", "off", Kind::kHex},
    {"mremap", "flags", Kind::kMremapFlags},
    {"access", "mode", Kind::kAccessMode},
    {"faccessat", "mode", Kind::kAccessMode},
    {"faccessat2", "mode", Kind::kAccessMode},
    {"faccessat2", "flags", Kind::kAtFlags},
    {"newfstatat", "flag", Kind::kAtFlags},
    {"unlinkat", "flag", Kind::kAtFlags},
    {"fchownat", "flag", Kind::kAtFlags},
    {"linkat", "flags", Kind::kAtFlags},
    {"utimensat", "flags", Kind::kAtFlags},
    {"execveat", "flags", Kind::kAtFlags},
    {"fchmodat2", "flags", Kind::kAtFlags},
    {"statx", "flags", Kind::kAtFlags},
    {"statx", "mask", Kind::kHex},
    {"fcntl", "cmd", Kind::kFcntlCommand},
    {"kill", "sig", Kind::kSignal},
    {"tkill", "sig", Kind::kSignal},
    {"tgkill", "sig", Kind::kSignal},
    {"rt_sigaction", "sig", Kind::kSignal},
    {"rt_sigprocmask", "how", Kind::kSigHow},
    {"lseek", "whence", Kind::kWhence},
    {"fadvise64", "advice", Kind::kFadvise},
    {"madvise", "behavior", Kind::kMadvise},
    {"arch_prctl", "option", Kind::kArchPrctl},
    {"arch_prctl", "arg2", Kind::kPointer},
    {"socket", "family", Kind::kFamily},
    {"socketpair", "family", Kind::kFamily},
    {"socket", "type", Kind::kSocketType},
    {"socketpair", "type", Kind::kSocketType},
    {"accept4", "flags", Kind::kSocketFlags},
    {"getrlimit", "resource", Kind::kResource},
    {"setrlimit", "resource", Kind::kResource},
    {"prlimit64", "resource", Kind::kResource},
    {"wait4", "options", Kind::kWaitOptions},
    {"waitid", "options", Kind::kWaitOptions},
    {"futex", "op", Kind::kFutexOp},
    {"close_range", "flags", Kind::kCloseRange},
    {"getrandom", "flags", Kind::kGetrandom},
    {"ioctl", "cmd", Kind::kIoctl},
    {"ioctl", "arg", Kind::kHex},
};

Kind kind_of(std::string_view call, std::string_view arg) {
  for (const Rule& rule : kRules) {
    if (rule.call == call && rule.arg == arg) return rule.kind;
  }
  for (const Rule& rule : kRules) {
    if (rule.call.empty() && rule.arg == arg) return rule.kind;
  }
  return Kind::kByType;
}

int64_t as_int(uint64_t raw) { return static_cast<int32_t>(static_cast<uint32_t>(raw)); }

// A number by its C type in the kernel's format: an int is the low half
// of its register, sign-extended; an unsigned int the low half.
std::string by_type(uint64_t raw, std::string_view type) {
  if (type.find('*') != std::string_view::npos) return pointer_text(raw);
  constexpr std::string_view kSigned32[] = {"int",     "pid_t", "key_t", "clockid_t",
                                            "timer_t", "mqd_t", "rwf_t"};
  constexpr std::string_view kSigned64[] = {"long", "off_t", "loff_t", "ssize_t"};
  constexpr std::string_view kUnsigned32[] = {"unsigned int", "unsigned", "u32",   "uid_t",
                                              "gid_t",        "umode_t",  "qid_t", "old_uid_t",
                                              "old_gid_t",    "__u32"};
  for (std::string_view name : kSigned32) {
    if (type == name) return std::to_string(as_int(raw));
  }
  for (std::string_view name : kSigned64) {
    if (type == name) return std::to_string(static_cast<int64_t>(raw));
  }
  for (std::string_view name : kUnsigned32) {
    if (type == name) return std::to_string(static_cast<uint32_t>(raw));
  }
  return std::to_string(raw);
}

std::string open_flags_text(uint64_t raw) {
  const uint64_t flags = static_cast<uint32_t>(raw);
  const std::string mode = constant_text(flags & 3, kOpenAccessModes, "03");
  const uint64_t rest = flags & ~uint64_t{3};
  return rest == 0 ? mode : mode + "|" + flags_text(rest, kOpenFlags);
}

std::string map_flags_text(uint64_t raw) {
  constexpr uint64_t kTypeMask = 0xf;
  std::string type =
      constant_text(raw & kTypeMask, kMapTypes, fmt::format("{:#x}", raw & kTypeMask));
  const uint64_t rest = raw & ~kTypeMask;
  return rest == 0 ? type : type + "|" + flags_text(rest, kMapFlags);
}

// FUTEX_WAIT_PRIVATE, FUTEX_WAKE|FUTEX_CLOCK_REALTIME: the command and its
// two flag bits.
std::string futex_op_text(uint64_t raw) {
  constexpr uint64_t kPrivate = 128;
  constexpr uint64_t kClockRealtime = 256;
  const auto op = static_cast<uint32_t>(raw);
  std::string text = constant_text(op & 127, kFutexCommands, std::to_string(op & 127));
  if ((op & kPrivate) != 0) text += "_PRIVATE";
  if ((op & kClockRealtime) != 0) text += "|FUTEX_CLOCK_REALTIME";
  const uint32_t rest = op & ~uint32_t{127 | kPrivate | kClockRealtime};
  if (rest != 0) text += fmt::format("|{:#x}", rest);
  return text;
}

std::string socket_type_text(uint64_t raw) {
  const auto type = static_cast<uint32_t>(raw);
  std::string text = constant_text(type & 0xf, kSocketTypes, std::to_string(type & 0xf));
  if ((type & ~0xfu) != 0) text += "|" + flags_text(type & ~0xfu, kSocketFlags);
  return text;
}

std::string number_or(std::span<const Named> names, uint64_t raw) {
  return constant_text(raw, names, std::to_string(as_int(raw)));
}

std::string value_text(Kind kind, uint64_t raw, std::string_view type) {
  constexpr int64_t kAtFdCwd = -100;
  switch (kind) {
    case Kind::kByType:
      return by_type(raw, type);
    case Kind::kFd:
      return std::to_string(as_int(raw));
    case Kind::kDirFd:
      return as_int(raw) == kAtFdCwd ? "AT_FDCWD" : std::to_string(as_int(raw));
    case Kind::kPointer:
      return pointer_text(raw);
    case Kind::kHex:
      return raw == 0 ? "0" : fmt::format("{:#x}", raw);
    case Kind::kOctal:
      return octal_text(raw);
    case Kind::kOpenFlags:
      return open_flags_text(raw);
    case Kind::kOpenBits:
      return flags_text(static_cast<uint32_t>(raw), kOpenFlags);
    case Kind::kProt:
      return flags_text(raw, kProtFlags);
    case Kind::kMapFlags:
      return map_flags_text(raw);
    case Kind::kMremapFlags:
      return flags_text(raw, kMremapFlags);
    case Kind::kAccessMode:
      return flags_text(static_cast<uint32_t>(raw), kAccessModes);
    case Kind::kAtFlags:
      return flags_text(static_cast<uint32_t>(raw), kAtFlags);
    case Kind::kFcntlCommand:
      return number_or(kFcntlCommands, static_cast<uint32_t>(raw));
    case Kind::kSignal:
      return signal_name(static_cast<uint32_t>(raw));
    case Kind::kSigHow:
      return number_or(kSigprocmaskHows, static_cast<uint32_t>(raw));
    case Kind::kWhence:
      return number_or(kSeekWhences, static_cast<uint32_t>(raw));
    case Kind::kFadvise:
      return number_or(kFadviseAdvice, static_cast<uint32_t>(raw));
    case Kind::kMadvise:
      return number_or(kMadviseAdvice, static_cast<uint32_t>(raw));
    case Kind::kArchPrctl:
      return number_or(kArchPrctlCodes, static_cast<uint32_t>(raw));
    case Kind::kFamily:
      return number_or(kAddressFamilies, static_cast<uint32_t>(raw));
    case Kind::kSocketType:
      return socket_type_text(raw);
    case Kind::kSocketFlags:
      return flags_text(static_cast<uint32_t>(raw), kSocketFlags);
    case Kind::kResource:
      return number_or(kResources, static_cast<uint32_t>(raw));
    case Kind::kWaitOptions:
      return flags_text(static_cast<uint32_t>(raw), kWaitOptions);
    case Kind::kFutexOp:
      return futex_op_text(raw);
    case Kind::kCloseRange:
      return flags_text(static_cast<uint32_t>(raw), kCloseRangeFlags);
    case Kind::kGetrandom:
      return flags_text(static_cast<uint32_t>(raw), kGetrandomFlags);
    case Kind::kIoctl:
      return constant_text(static_cast<uint32_t>(raw), kIoctlCommands,
                           fmt::format("{:#x}", static_cast<uint32_t>(raw)));
  }
  return std::to_string(raw);
}

std::string argument_text(const SyscallCall& call, size_t index, size_t string_limit) {
  if (!call.has_arg[index]) return "?";
  const syscalls::SyscallArg& arg = call.info->args[index];
  if (call.strings[index]) {
    const bool path = is_path_argument(arg.name);
    return quote_string(*call.strings[index], path ? SIZE_MAX : string_limit);
  }
  return value_text(kind_of(call.info->name, arg.name), call.args[index], arg.type);
}

// fcntl's third argument: what its command takes, or nothing.
void fix_fcntl(const SyscallCall& call, std::vector<std::string>& args) {
  constexpr uint64_t kNoArgument[] = {1, 3, 9, 11, 1025, 1032, 1034};  // the F_GET* commands
  const auto command = static_cast<uint32_t>(call.args[1]);
  for (uint64_t none : kNoArgument) {
    if (command == none) {
      args.pop_back();
      return;
    }
  }
  if (command == 2) args[2] = flags_text(call.args[2], kFdFlags);  // F_SETFD
  if (command == 4) args[2] = open_flags_text(call.args[2]);       // F_SETFL
  if (command == 0 || command == 1030) args[2] = std::to_string(as_int(call.args[2]));
}

// How many of futex's six arguments its command reads, as strace shows
// them: FUTEX_WAKE takes three, FUTEX_WAIT four.
size_t futex_argument_count(uint64_t op) {
  constexpr size_t kCounts[] = {4, 3, 3, 5, 6, 6, 4, 2, 2, 6, 6, 6, 6, 4};
  const uint64_t command = op & 127;
  return command < std::size(kCounts) ? kCounts[command] : 6;
}

// clone's arguments by name, as strace prints them; the tids and the
// thread pointer only where the flags use them.
std::vector<std::string> clone_arguments(const SyscallCall& call) {
  constexpr uint64_t kCsignal = 0xff;
  constexpr uint64_t kParentSettid = 0x100000;
  constexpr uint64_t kPidfd = 0x1000;
  constexpr uint64_t kChildTid = 0x1000000 | 0x200000;  // CHILD_SETTID, CHILD_CLEARTID
  constexpr uint64_t kSettls = 0x80000;
  const uint64_t flags = call.args[0];
  std::string flag_names = flags_text(flags & ~kCsignal, kCloneFlags);
  if ((flags & kCsignal) != 0) {
    const std::string signal = signal_name(flags & kCsignal);
    flag_names = (flags & ~kCsignal) == 0 ? signal : flag_names + "|" + signal;
  }
  std::vector<std::string> args = {"child_stack=" + pointer_text(call.args[1]),
                                   "flags=" + flag_names};
  if ((flags & (kParentSettid | kPidfd)) != 0) {
    args.push_back("parent_tid=" + pointer_text(call.args[2]));
  }
  if ((flags & kSettls) != 0) args.push_back("tls=" + pointer_text(call.args[4]));
  if ((flags & kChildTid) != 0) args.push_back("child_tidptr=" + pointer_text(call.args[3]));
  return args;
}

// The bytes a call wrote or read, `length` of them, as strace quotes
// them: cut at the string limit, "..." when there were more (also where
// the copy, at most kMaxBufferBytes, is shorter than the limit).
std::string buffer_text(const std::string& copied, uint64_t length, size_t string_limit) {
  const size_t shown = std::min({copied.size(), string_limit, static_cast<size_t>(length)});
  std::string bytes = copied.substr(0, shown);
  if (length > shown) bytes += '\0';  // one more: quote_string adds the "..."
  return quote_string(bytes, shown);
}

std::vector<std::string> argument_list(const SyscallCall& call, size_t string_limit) {
  const std::string_view name = call.info->name;
  if (name == "clone" && call.info->arg_count == 5) return clone_arguments(call);
  std::vector<std::string> args;
  const BufferCall* buffer = call.buffer ? buffer_call(name) : nullptr;
  for (size_t i = 0; i < call.info->arg_count; ++i) {
    args.push_back(buffer != nullptr && buffer->buffer == i
                       ? buffer_text(*call.buffer, call.buffer_length, string_limit)
                       : argument_text(call, i, string_limit));
  }
  // open's mode only matters, and strace only shows it, when a file may be
  // made.
  constexpr uint64_t kCreates = 0100 | 020000000;  // O_CREAT, O_TMPFILE
  const size_t flags_at = name == "openat" ? 2 : 1;
  if ((name == "open" || name == "openat") && args.size() == flags_at + 2 &&
      (call.args[flags_at] & kCreates) == 0) {
    args.pop_back();
  }
  if (name == "fcntl" && args.size() == 3) fix_fcntl(call, args);
  if (name == "futex" && args.size() == 6) args.resize(futex_argument_count(call.args[1]));
  return args;
}

}  // namespace

std::string call_name(const syscalls::SyscallInfo& info) {
  constexpr std::pair<std::string_view, std::string_view> kLibcNames[] = {
      {"newstat", "stat"},   {"newfstat", "fstat"},      {"newlstat", "lstat"},
      {"newuname", "uname"}, {"sendfile64", "sendfile"}, {"umount", "umount2"}};
  for (const auto& [kernel, libc] : kLibcNames) {
    if (info.name == kernel) return std::string(libc);
  }
  return info.name;
}

std::string arguments_text(const SyscallCall& call, size_t string_limit, size_t first,
                           size_t last) {
  const std::vector<std::string> args = argument_list(call, string_limit);
  std::string text;
  for (size_t i = first; i < std::min(last, args.size()); ++i) {
    if (i > first) text += ", ";
    text += args[i];
  }
  return text;
}

bool never_returns(const syscalls::SyscallInfo& info) {
  const std::string_view name = info.name;
  return name == "exit" || name == "exit_group";
}

std::string result_text(const SyscallCall& call, int64_t ret) {
  constexpr int64_t kMaxErrno = 4095;
  if (ret < 0 && ret >= -kMaxErrno) {
    return "-1 " + errno_text(static_cast<int>(-ret));
  }
  const std::string_view name = call.info->name;
  if (name == "mmap" || name == "mremap" || name == "brk" || name == "shmat") {
    return fmt::format("{:#x}", static_cast<uint64_t>(ret));
  }
  if (name == "fcntl" && ret > 0) {
    const auto bits = static_cast<uint64_t>(ret);
    const auto command = static_cast<uint32_t>(call.args[1]);
    if (command == 1) return fmt::format("{:#x} (flags {})", ret, flags_text(bits, kFdFlags));
    if (command == 3) return fmt::format("{:#x} (flags {})", ret, open_flags_text(bits));
  }
  return std::to_string(ret);
}

}  // namespace dprobe::cli::strace
