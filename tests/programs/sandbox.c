// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// An allowlist seccomp sandbox, as a hardened service installs one: only
// read, write, exit, exit_group, rt_sigreturn, rt_sigprocmask, futex,
// fstat, newfstatat, brk, mmap and munmap; any other system call kills the
// process. Installed with syscall(SYS_seccomp) (argument "syscall") or
// prctl(PR_SET_SECCOMP) ("prctl"), then sandboxed_step(i) is called 100
// times and "sandbox: SUM" written. Traced, each call is a hit, and the
// process must live and print what it prints untraced.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) long sandboxed_step(long i) {
  __asm__ volatile("" ::: "memory");  // a call the compiler keeps
  return i * 2 + 1;
}

#define ALLOW(nr) \
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int enter_sandbox(int with_prctl) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      ALLOW(SYS_read),
      ALLOW(SYS_write),
      ALLOW(SYS_exit),
      ALLOW(SYS_exit_group),
      ALLOW(SYS_rt_sigreturn),
      ALLOW(SYS_rt_sigprocmask),
      ALLOW(SYS_futex),
      ALLOW(SYS_fstat),
      ALLOW(SYS_newfstatat),
      ALLOW(SYS_brk),
      ALLOW(SYS_mmap),
      ALLOW(SYS_munmap),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  if (with_prctl) return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0);
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program);
}

int main(int argc, char** argv) {
  const int with_prctl = argc > 1 && strcmp(argv[1], "prctl") == 0;
  if (enter_sandbox(with_prctl) != 0) return 2;
  long sum = 0;
  for (long i = 0; i < 100; ++i) sum += sandboxed_step(i);
  char line[64];
  const int n = snprintf(line, sizeof line, "sandbox: %ld\n", sum);
  return write(1, line, (size_t)n) == n ? 0 : 3;
}
