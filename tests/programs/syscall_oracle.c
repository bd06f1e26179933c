// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The same system calls on every run, for the kernel's own syscall events
// to be the oracle of dprobe's (tests/integration/syscall_oracle_test.cc).
// Built without PIE (tests/programs/CMakeLists.txt): its strings and
// buffers are static, at the same addresses on every run, so even the
// pointer arguments print the same under the kernel and under dprobe.
// getppid marks where main begins: what the dynamic loader did before is
// not compared. Every call goes through syscall(2), and the program ends
// with exit_group, so that nothing but these calls follows the mark:
//   getppid, openat("/dev/zero", O_RDONLY | O_CLOEXEC), read 64 bytes,
//   close, write "syscall_oracle: ok\n" to stdout, newfstatat of a missing
//   path (-ENOENT), lseek(0, 0, SEEK_CUR), umask(022) twice, a read of a
//   bad descriptor (-EBADF), getppid, exit_group(0)
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char kZero[] = "/dev/zero";
static const char kMissing[] = "/nonexistent/dprobe-syscall-oracle";
static const char kMessage[] = "syscall_oracle: ok\n";
static char buffer[64];
static struct stat status;

int main(void) {
  syscall(SYS_getppid);
  const long fd = syscall(SYS_openat, AT_FDCWD, kZero, O_RDONLY | O_CLOEXEC, 0);
  syscall(SYS_read, fd, buffer, sizeof(buffer));
  syscall(SYS_close, fd);
  syscall(SYS_write, STDOUT_FILENO, kMessage, sizeof(kMessage) - 1);
  syscall(SYS_newfstatat, AT_FDCWD, kMissing, &status, 0);
  syscall(SYS_lseek, STDIN_FILENO, 0, SEEK_CUR);
  const long mask = syscall(SYS_umask, 022);
  syscall(SYS_umask, mask);
  syscall(SYS_read, 1000, buffer, sizeof(buffer));
  syscall(SYS_getppid);
  syscall(SYS_exit_group, 0);
  return 1;
}
