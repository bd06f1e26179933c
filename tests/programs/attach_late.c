// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A program attached to while it runs, for tests/integration/
// attach_interposers_test.cc: what it does after the attach goes through
// the C library functions the agent stands in front of.
//   attach_late CALLS PROG ARG...
// Prints "attach_late: ready", then CALLS times: blocks every signal with
// sigprocmask, calls work(i) (the probe's function: a breakpoint trap with
// SIGTRAP blocked would kill it), restores the mask, sleeps 20 ms. Then
// execs PROG ARG... ($PATH searched). Exits 1 if the exec fails.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline, used)) int work(int i) {
  static volatile int sink;
  sink += i;
  return sink;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const int calls = atoi(argv[1]);
  printf("attach_late: ready\n");
  fflush(stdout);
  for (int i = 0; i < calls; ++i) {
    sigset_t all;
    sigset_t old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    work(i);
    sigprocmask(SIG_SETMASK, &old, NULL);
    usleep(20000);
  }
  execvp(argv[2], argv + 2);
  return 1;
}
