// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Calls one small function N times on each of T threads (default 1) and
// prints the nanoseconds of CPU time per call, averaged over the threads,
// for bench/probe_cost.sh to compare with no probe, a dprobe probe and a
// kernel uprobe on the same function. CPU time, not wall time: threads
// sharing fewer cores than they are still cost what they cost each.
// With BURST, the calls come in bursts of that many with a pause of 2 ms
// between (not timed): a tracer's reader keeps up, so every hit writes
// its record, as at any rate a reader can sustain (without pauses, 30
// million hits a second fill any ring and most hits only count a loss).
//   hit_loop [N] [T] [BURST]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long bench_target(long a, long b) {
  __asm__ volatile("" ::: "memory");  // keep the call and its arguments
  return a ^ b;
}

static long calls;
static long burst;

static double thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

// Only the bursts are timed: the pauses' own system calls (a microsecond
// or more each in a VM) are no part of a call's cost.
static void* loop(void* out) {
  long sum = 0;
  double spent = 0;
  const struct timespec pause = {0, 2000000};
  const long per_burst = burst > 0 ? burst : calls;
  for (long done = 0; done < calls;) {
    const long n = calls - done < per_burst ? calls - done : per_burst;
    const double start = thread_cpu_ns();
    for (long i = done; i < done + n; ++i) sum += bench_target(i, 7);
    spent += thread_cpu_ns() - start;
    done += n;
    if (burst > 0 && done < calls) nanosleep(&pause, NULL);
  }
  *(double*)out = spent / (double)calls;
  return sum == 42 ? out : NULL;  // use sum so the loop stays
}

int main(int argc, char** argv) {
  calls = argc > 1 ? atol(argv[1]) : 1000000;
  const int threads = argc > 2 ? atoi(argv[2]) : 1;
  burst = argc > 3 ? atol(argv[3]) : 0;
  if (calls <= 0 || threads <= 0 || threads > 64 || burst < 0) return 2;
  pthread_t ids[64];
  double per_call[64];
  for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, loop, &per_call[t]);
  double total = 0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(ids[t], NULL);
    total += per_call[t];
  }
  printf("%.1f\n", total / threads);
  return 0;
}
