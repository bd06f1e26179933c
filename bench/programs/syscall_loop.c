// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Makes N getppid system calls (the C library's wrapper: one syscall
// instruction, nothing cached) and prints the nanoseconds of wall time per
// call, for bench/syscall_cost.sh to compare untraced, dprobe, strace and
// the kernel's own syscall event on the same loop. Wall time, not CPU
// time: strace's cost is mostly in its own process and in the switches to
// it, which the traced thread's CPU time would not show.
//   syscall_loop [N]     (default 200000)
// With SYSCALL_LOOP_DISPATCH=1 in the environment, the loop runs with
// Syscall User Dispatch on and its selector at "allow": what the kernel
// alone adds to a call made outside the dispatch's range (it reads the
// selector). With SYSCALL_LOOP_DISPATCH=2, the range covers the C
// library's getppid: what it adds to a call made inside it, which is where
// dprobe's rewritten sites make their calls (the floor of its tracing).
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const long calls = argc > 1 ? atol(argv[1]) : 200000;
  if (calls <= 0) return 2;
  static char selector = 0;  // SYSCALL_DISPATCH_FILTER_ALLOW
  const char* dispatch = getenv("SYSCALL_LOOP_DISPATCH");
  const int mode = dispatch != NULL ? atoi(dispatch) : 0;
  // getppid's own code, its syscall within its first 64 bytes.
  const unsigned long inside = mode == 2 ? (unsigned long)&getppid : 0;
  if (mode != 0 && prctl(59 /* PR_SET_SYSCALL_USER_DISPATCH */, 1 /* ON */, inside,
                         inside != 0 ? 64 : 0, &selector) != 0) {
    return 3;
  }
  const pid_t parent = getppid();
  long same = 0;
  const double start = now_ns();
  for (long i = 0; i < calls; ++i) same += getppid() == parent;
  const double per_call = (now_ns() - start) / (double)calls;
  if (same != calls) return 1;  // every call answered, and the loop kept
  printf("%.1f\n", per_call);
  return 0;
}
