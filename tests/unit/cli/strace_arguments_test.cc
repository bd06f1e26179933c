// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Each common call's arguments and result as strace 6.1 prints them
// (lines from `strace cat`, `strace ls` and `strace sh -c` on Debian 12),
// from the registers the kernel's syscall events record.
#include "cli/output/strace_arguments.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace dprobe::cli::strace {
namespace {

constexpr uint64_t kAtFdCwd = static_cast<uint64_t>(-100);

SyscallCall call_of(const char* name, std::initializer_list<uint64_t> args) {
  SyscallCall call{.info = syscalls::find_syscall(arch::Isa::kX86_64, name)};
  EXPECT_NE(call.info, nullptr) << name;
  size_t i = 0;
  for (uint64_t arg : args) call.args[i++] = arg;
  return call;
}

std::string line(const SyscallCall& call, int64_t ret) {
  return call_name(*call.info) + "(" + arguments_text(call, kDefaultStringLimit) +
         ") = " + result_text(call, ret);
}

TEST(StraceArguments, OpenatWithoutAndWithACreatedFile) {
  SyscallCall call = call_of("openat", {kAtFdCwd, 0x7ffc0000, 02000000, 0});
  call.strings[1] = "/etc/ld.so.cache";
  EXPECT_EQ(line(call, 3), R"(openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3)");
  SyscallCall made = call_of("openat", {3, 0x7ffc0000, 01 | 0100 | 01000, 0644});
  made.strings[1] = "out.txt";
  EXPECT_EQ(
      line(made, -13),
      R"(openat(3, "out.txt", O_WRONLY|O_CREAT|O_TRUNC, 0644) = -1 EACCES (Permission denied))");
}

TEST(StraceArguments, FileNamesAreNeverCutOtherStringsAre) {
  const std::string path = "/usr/lib/locale/C.utf8/LC_MESSAGES/SYS_LC_MESSAGES";
  SyscallCall open = call_of("openat", {kAtFdCwd, 1, 0, 0});
  open.strings[1] = path;
  EXPECT_EQ(arguments_text(open, 4), "AT_FDCWD, \"" + path + "\", O_RDONLY");
  SyscallCall memfd = call_of("memfd_create", {1, 0});
  memfd.strings[0] = "a-rather-long-name";
  EXPECT_EQ(arguments_text(memfd, 4), R"("a-ra"..., 0)");
}

TEST(StraceArguments, AStringNotCopiedPrintsItsAddress) {
  const SyscallCall call = call_of("openat", {kAtFdCwd, 0x7ffe69a5b3f0, 0, 0});
  EXPECT_EQ(arguments_text(call, 32), "AT_FDCWD, 0x7ffe69a5b3f0, O_RDONLY");
}

TEST(StraceArguments, StatAndAccessFlags) {
  SyscallCall stat = call_of("newfstatat", {3, 1, 0x7ffd1000, 0x1000});
  stat.strings[1] = "";
  EXPECT_EQ(line(stat, 0), R"(newfstatat(3, "", 0x7ffd1000, AT_EMPTY_PATH) = 0)");
  SyscallCall access = call_of("access", {1, 4});
  access.strings[0] = "/etc/ld.so.preload";
  EXPECT_EQ(line(access, -2),
            R"(access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file or directory))");
  EXPECT_EQ(call_name(*call_of("newfstat", {}).info), "fstat");
}

TEST(StraceArguments, MemoryMapsWithAddressResults) {
  EXPECT_EQ(line(call_of("mmap", {0x7fa95ceaa000, 1400832, 5, 0x812, 3, 0x26000}), 0x7fa95ceaa000),
            "mmap(0x7fa95ceaa000, 1400832, PROT_READ|PROT_EXEC, "
            "MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x26000) = 0x7fa95ceaa000");
  EXPECT_EQ(line(call_of("mmap", {0, 8192, 3, 0x22, static_cast<uint64_t>(-1), 0}), 0x7fa95d072000),
            "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = "
            "0x7fa95d072000");
  EXPECT_EQ(line(call_of("mprotect", {0x558b574ab000, 4096, 1}), 0),
            "mprotect(0x558b574ab000, 4096, PROT_READ) = 0");
  EXPECT_EQ(line(call_of("brk", {0}), 0x558b5c71b000), "brk(NULL) = 0x558b5c71b000");
  EXPECT_EQ(line(call_of("munmap", {0x7fa95d066000, 45139}), 0),
            "munmap(0x7fa95d066000, 45139) = 0");
  EXPECT_EQ(line(call_of("mmap", {0, 1 << 30, 3, 0x22, static_cast<uint64_t>(-1), 0}), -12),
            "mmap(NULL, 1073741824, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = -1 "
            "ENOMEM (Cannot allocate memory)");
}

TEST(StraceArguments, DescriptorsAreSignedInts) {
  EXPECT_EQ(line(call_of("close", {0xffffffff}), -9), "close(-1) = -1 EBADF (Bad file descriptor)");
  EXPECT_EQ(line(call_of("read", {3, 0x55eb30c16000, 131072}), 267),
            "read(3, 0x55eb30c16000, 131072) = 267");
  EXPECT_EQ(line(call_of("lseek", {3, static_cast<uint64_t>(-1), 1}), -22),
            "lseek(3, -1, SEEK_CUR) = -1 EINVAL (Invalid argument)");
  EXPECT_EQ(line(call_of("fadvise64", {3, 0, 0, 2}), 0),
            "fadvise64(3, 0, 0, POSIX_FADV_SEQUENTIAL) = 0");
}

TEST(StraceArguments, FcntlShowsTheArgumentItsCommandTakes) {
  EXPECT_EQ(line(call_of("fcntl", {3, 1, 0x55}), 1), "fcntl(3, F_GETFD) = 0x1 (flags FD_CLOEXEC)");
  EXPECT_EQ(line(call_of("fcntl", {3, 2, 1}), 0), "fcntl(3, F_SETFD, FD_CLOEXEC) = 0");
  EXPECT_EQ(line(call_of("fcntl", {0, 3, 0}), 0x8002),
            "fcntl(0, F_GETFL) = 0x8002 (flags O_RDWR|O_LARGEFILE)");
  EXPECT_EQ(line(call_of("fcntl", {3, 4, 04000}), 0), "fcntl(3, F_SETFL, O_RDONLY|O_NONBLOCK) = 0");
  EXPECT_EQ(line(call_of("fcntl", {1, 1030, 10}), 10), "fcntl(1, F_DUPFD_CLOEXEC, 10) = 10");
}

TEST(StraceArguments, ProcessCalls) {
  EXPECT_EQ(line(call_of("clone", {0x1200011, 0, 0, 0x7f3d8e7c5a10, 0}), 12346),
            "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, "
            "child_tidptr=0x7f3d8e7c5a10) = 12346");
  EXPECT_EQ(line(call_of("wait4", {static_cast<uint64_t>(-1), 0x7ffc10, 0, 0}), 12346),
            "wait4(-1, 0x7ffc10, 0, NULL) = 12346");
  EXPECT_EQ(line(call_of("kill", {12346, 15}), 0), "kill(12346, SIGTERM) = 0");
  EXPECT_EQ(line(call_of("rt_sigprocmask", {0, 0x7ffc20, 0, 8}), 0),
            "rt_sigprocmask(SIG_BLOCK, 0x7ffc20, NULL, 8) = 0");
  EXPECT_EQ(line(call_of("arch_prctl", {0x1002, 0x7fa95ce81740}), 0),
            "arch_prctl(ARCH_SET_FS, 0x7fa95ce81740) = 0");
  EXPECT_EQ(line(call_of("prlimit64", {0, 3, 0, 0x7ffc30}), 0),
            "prlimit64(0, RLIMIT_STACK, NULL, 0x7ffc30) = 0");
  EXPECT_TRUE(never_returns(*call_of("exit_group", {0}).info));
  EXPECT_FALSE(never_returns(*call_of("execve", {}).info));
}

TEST(StraceArguments, FutexShowsTheArgumentsItsCommandReads) {
  EXPECT_EQ(line(call_of("futex", {0x7f00a4c, 129, 2147483647, 0, 3, 0}), 0),
            "futex(0x7f00a4c, FUTEX_WAKE_PRIVATE, 2147483647) = 0");
  EXPECT_EQ(line(call_of("futex", {0x7f00a4c, 128, 2, 0, 0, 0}), -11),
            "futex(0x7f00a4c, FUTEX_WAIT_PRIVATE, 2, NULL) = -1 EAGAIN (Resource temporarily "
            "unavailable)");
}

TEST(StraceArguments, SocketsAndMissingFields) {
  EXPECT_EQ(line(call_of("socket", {1, 1 | 02000000 | 04000, 0}), 3),
            "socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0) = 3");
  SyscallCall partial = call_of("close", {3});
  partial.has_arg[0] = false;
  EXPECT_EQ(arguments_text(partial, 32), "?");
}

}  // namespace
}  // namespace dprobe::cli::strace
