// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/plan/strace_calls.h"

#include <algorithm>
#include <set>

#include "base/strings.h"

namespace dprobe::cli::strace {
namespace {

using syscalls::SyscallInfo;

constexpr std::string_view kPathArguments[] = {
    "filename",    "pathname",      "path",    "oldname",  "newname",  "specialfile", "special",
    "to_pathname", "from_pathname", "put_old", "new_root", "dir_name", "dev_name"};

// Calls whose file name is an argument called `name`.
constexpr std::string_view kNameIsPath[] = {"acct", "umount"};

// Arguments called `name` that strace copies to print (xattr names,
// memfd_create's); sethostname's has a length, no NUL.
constexpr std::string_view kBoundedNames[] = {"sethostname", "setdomainname"};

// The C library's names strace prints, for the kernel's events.
constexpr std::pair<std::string_view, std::string_view> kLibcNames[] = {
    {"stat", "newstat"},   {"fstat", "newfstat"},      {"lstat", "newlstat"},
    {"uname", "newuname"}, {"sendfile", "sendfile64"}, {"umount2", "umount"}};

// strace's classes of calls (its man page, -e trace=%CLASS) that are not
// found from the arguments' names.
struct CallClass {
  std::string_view name;
  std::vector<std::string_view> calls;
};

const std::vector<CallClass>& listed_classes() {
  static const std::vector<CallClass> kClasses = {
      {"process",
       {"clone", "clone3", "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4",
        "waitid", "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open",
        "pidfd_send_signal"}},
      {"network",
       {"socket", "socketpair", "bind", "listen", "accept", "accept4", "connect", "getsockname",
        "getpeername", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
        "shutdown", "setsockopt", "getsockopt"}},
      {"signal",
       {"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
        "rt_sigqueueinfo", "rt_tgsigqueueinfo", "rt_sigsuspend", "sigaltstack", "kill", "tkill",
        "tgkill", "pause", "signalfd", "signalfd4", "pidfd_send_signal"}},
      {"memory",
       {"mmap",
        "munmap",
        "mprotect",
        "mremap",
        "brk",
        "madvise",
        "msync",
        "mincore",
        "mlock",
        "munlock",
        "mlockall",
        "munlockall",
        "mlock2",
        "mbind",
        "set_mempolicy",
        "get_mempolicy",
        "migrate_pages",
        "move_pages",
        "remap_file_pages",
        "pkey_mprotect",
        "pkey_alloc",
        "pkey_free",
        "process_madvise",
        "memfd_secret",
        "mseal",
        "shmat",
        "shmdt",
        "set_mempolicy_home_node"}},
      {"ipc",
       {"shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop", "msgget",
        "msgsnd", "msgrcv", "msgctl"}},
      {"creds",
       {"getuid", "geteuid", "getgid", "getegid", "setuid", "setgid", "setreuid", "setregid",
        "setresuid", "getresuid", "setresgid", "getresgid", "setfsuid", "setfsgid", "getgroups",
        "setgroups", "capget", "capset"}},
      {"clock",
       {"clock_gettime", "clock_settime", "clock_getres", "clock_adjtime", "clock_nanosleep",
        "gettimeofday", "settimeofday", "adjtimex", "time"}},
  };
  return kClasses;
}

// Calls that make a descriptor without taking one: in %desc with those
// that take one.
constexpr std::string_view kMakeDescriptors[] = {
    "open",           "creat",          "socket",        "socketpair",    "pipe",
    "pipe2",          "epoll_create",   "epoll_create1", "eventfd",       "eventfd2",
    "signalfd",       "timerfd_create", "inotify_init",  "inotify_init1", "fanotify_init",
    "memfd_create",   "memfd_secret",   "pidfd_open",    "userfaultfd",   "perf_event_open",
    "io_uring_setup", "fsopen",         "select",        "pselect6",      "poll",
    "ppoll"};

constexpr std::string_view kDescriptorArguments[] = {"fd",    "oldfd", "newfd",  "fildes", "out_fd",
                                                     "in_fd", "fd_in", "fd_out", "epfd",   "ufd",
                                                     "pidfd", "dfd",   "olddfd", "newdfd"};

constexpr BufferCall kBufferCalls[] = {
    {"write", 1, 2, false}, {"pwrite64", 1, 2, false}, {"sendto", 1, 2, false},
    {"read", 1, 2, true},   {"pread64", 1, 2, true},   {"recvfrom", 1, 2, true},
};

// The register that holds system call argument `index` as the fetch
// language names it: the same at the call's exit (x86_64 and arm64 leave
// them, but for arm64's x0, which takes the result).
std::string syscall_argument_register(arch::Isa isa, size_t index) {
  constexpr std::string_view kX86_64[] = {"%di", "%si", "%dx", "%r10", "%r8", "%r9"};
  constexpr std::string_view kArm64[] = {"%x0", "%x1", "%x2", "%x3", "%x4", "%x5"};
  return std::string(isa == arch::Isa::kX86_64 ? kX86_64[index] : kArm64[index]);
}

// " buf_data0=+0(BASE):u8[64] buf_data1=+64(BASE):u8[64] ...".
std::string buffer_fetches(const std::string& name, const std::string& base, size_t bytes) {
  std::string text;
  for (size_t at = 0, field = 0; at < bytes; at += kBufferField, ++field) {
    const size_t size = std::min(kBufferField, bytes - at);
    text += " " + name + std::string(kDataSuffix) + std::to_string(field) + "=+" +
            std::to_string(at) + "(" + base + "):u8[" + std::to_string(size) + "]";
  }
  return text;
}

bool contains(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool takes_path(const SyscallInfo& info) {
  if (contains(kNameIsPath, info.name)) return true;
  for (size_t i = 0; i < info.arg_count; ++i) {
    if (is_path_argument(info.args[i].name)) return true;
  }
  return false;
}

bool works_with_descriptors(const SyscallInfo& info) {
  if (contains(kMakeDescriptors, info.name)) return true;
  for (size_t i = 0; i < info.arg_count; ++i) {
    if (contains(kDescriptorArguments, info.args[i].name)) return true;
  }
  return false;
}

// Whether `info` is in %CLASS; false for no such class (`known` false).
bool in_class(const SyscallInfo& info, std::string_view name, bool& known) {
  known = true;
  if (name == "file") return takes_path(info);
  if (name == "desc") return works_with_descriptors(info);
  for (const CallClass& listed : listed_classes()) {
    if (listed.name == name) return contains(listed.calls, info.name);
  }
  known = false;
  return false;
}

std::string_view kernel_name(std::string_view name) {
  for (const auto& [libc, kernel] : kLibcNames) {
    if (name == libc) return kernel;
  }
  return name;
}

// Adds the calls one item of the list names to `chosen`; false for none.
bool add_item(std::string_view item, arch::Isa isa, std::set<int>& chosen) {
  bool matched = false;
  for (const SyscallInfo& info : syscalls::syscall_table(isa)) {
    bool known = true;
    const bool match = item == "all"           ? true
                       : item.starts_with('%') ? in_class(info, item.substr(1), known)
                                               : glob_match(kernel_name(item), info.name);
    if (!known) return false;
    if (match) {
      chosen.insert(info.nr);
      matched = true;
    }
  }
  return matched;
}

std::vector<std::string_view> comma_items(std::string_view text) {
  std::vector<std::string_view> items;
  for (size_t comma; (comma = text.find(',')) != std::string_view::npos;) {
    items.push_back(text.substr(0, comma));
    text.remove_prefix(comma + 1);
  }
  items.push_back(text);
  return items;
}

}  // namespace

bool is_path_argument(std::string_view name) { return contains(kPathArguments, name); }

const BufferCall* buffer_call(std::string_view name) {
  for (const BufferCall& call : kBufferCalls) {
    if (call.call == name) return &call;
  }
  return nullptr;
}

size_t buffer_bytes(size_t string_limit) { return std::min(string_limit, kMaxBufferBytes); }

bool fetches_string(const SyscallInfo& info, size_t index) {
  const std::string_view type = info.args[index].type;
  const std::string_view name = info.args[index].name;
  if (is_path_argument(name)) return type == "const char *" || type == "char *";
  if (name == "name") {
    if (contains(kNameIsPath, info.name)) return true;
    return type == "const char *" && !contains(kBoundedNames, info.name);
  }
  // Other strings the call reads: key types and descriptions, a mount's
  // type, a message queue's name. A buffer (buf, u_msg_ptr) has a length
  // instead of a NUL.
  constexpr std::string_view kStrings[] = {"_type",  "_description", "_callout_info", "type",
                                           "u_name", "uname",        "_fs_name",      "_key"};
  return (type == "const char *" || type == "char *") && contains(kStrings, name);
}

Result<std::vector<const SyscallInfo*>> select_syscalls(std::string_view spec, arch::Isa isa) {
  if (syscalls::syscall_table(isa).empty()) {
    return fail("--format strace: no system call table for this architecture yet");
  }
  const bool negate = spec.starts_with('!');
  if (negate) spec.remove_prefix(1);
  std::set<int> chosen;
  if (spec.empty() && !negate) spec = "all";
  for (std::string_view item : comma_items(spec)) {
    item = trim(item);
    if (item.empty() || !add_item(item, isa, chosen)) {
      return fail("--syscalls: no system call or class " + std::string(item) +
                  " (a name such as openat or open*, or one of %file %desc %process %network "
                  "%signal %memory %ipc %creds %clock, or all)");
    }
  }
  std::vector<const SyscallInfo*> calls;
  for (const SyscallInfo& info : syscalls::syscall_table(isa)) {
    if (chosen.contains(info.nr) != negate) calls.push_back(&info);
  }
  return calls;
}

std::vector<std::string> strace_definitions(const std::vector<const SyscallInfo*>& calls,
                                            size_t string_limit, arch::Isa isa) {
  std::vector<std::string> definitions;
  const size_t bytes = buffer_bytes(string_limit);
  for (const SyscallInfo* info : calls) {
    const BufferCall* buffer = buffer_call(info->name);
    std::string enter =
        "e:" + std::string(kEnterGroup) + "/" + info->name + " syscalls/sys_enter_" + info->name;
    for (size_t i = 0; i < info->arg_count; ++i) {
      const std::string name = info->args[i].name;
      enter += " " + name + "=$" + name;
      if (fetches_string(*info, i)) {
        enter += " " + name + std::string(kStringSuffix) + "=+0($" + name + "):ustring";
      }
      if (buffer != nullptr && !buffer->filled && buffer->buffer == i && bytes > 0) {
        enter += buffer_fetches(name, "$" + name, bytes);
      }
    }
    definitions.push_back(std::move(enter));
    if (buffer != nullptr && buffer->filled && bytes > 0) {
      const std::string name = info->args[buffer->buffer].name;
      definitions.push_back(
          "e:" + std::string(kExitGroup) + "/" + info->name + " syscalls/sys_exit_" + info->name +
          " ret=$ret" +
          buffer_fetches(name, syscall_argument_register(isa, buffer->buffer), bytes));
    } else {
      definitions.push_back("syscalls:sys_exit_" + std::string(info->name));
    }
  }
  return definitions;
}

}  // namespace dprobe::cli::strace
