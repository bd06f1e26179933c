// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Calls one small function N times and prints the nanoseconds per call, for
// bench/probe_cost.sh to compare with no probe, a dprobe probe and a kernel
// uprobe on the same function.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long bench_target(long a, long b) {
  __asm__ volatile("" ::: "memory");  // keep the call and its arguments
  return a ^ b;
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 1000000;
  long sum = 0;
  const double start = now_ns();
  for (long i = 0; i < n; ++i) sum += bench_target(i, 7);
  const double elapsed = now_ns() - start;
  printf("%.1f\n", elapsed / (double)n);
  return sum == 42 ? 1 : 0;  // use sum so the loop stays
}
