// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A long-running program to attach to, and to trace while its tracer dies
// (tests/integration/attach_test.cc, controller_death_test.cc):
//   busy_loop THREADS SECONDS
// THREADS threads call busy_probe(t) without pause. Once every thread has
// made a call, main prints "busy_loop: ready PID", then every 20 ms
// "busy_loop: calls N" (the calls made so far: the program's progress).
// After SECONDS (0: never) the threads stop; main prints "busy_loop: done"
// and exits 0.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

struct Counter {
  _Alignas(64) atomic_long calls;
};

static struct Counter counters[MAX_THREADS];
static atomic_int stop;

__attribute__((noinline, used)) long busy_probe(long thread) {
  static volatile long sink;
  sink += thread;
  return sink;
}

static void* spin(void* arg) {
  const long t = (long)arg;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    busy_probe(t);
    atomic_fetch_add_explicit(&counters[t].calls, 1, memory_order_relaxed);
  }
  return NULL;
}

static long total_calls(long threads) {
  long total = 0;
  for (long t = 0; t < threads; ++t) total += atomic_load(&counters[t].calls);
  return total;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: busy_loop THREADS SECONDS\n");
    return 2;
  }
  const long threads = strtol(argv[1], NULL, 10);
  const double seconds = strtod(argv[2], NULL);
  if (threads < 1 || threads > MAX_THREADS) return 2;
  pthread_t ids[MAX_THREADS];
  for (long t = 0; t < threads; ++t) {
    if (pthread_create(&ids[t], NULL, spin, (void*)t) != 0) return 1;
  }
  for (long t = 0; t < threads; ++t) {
    while (atomic_load(&counters[t].calls) == 0) usleep(1000);
  }
  printf("busy_loop: ready %d\n", (int)getpid());
  fflush(stdout);
  const double start = now();
  while (seconds <= 0 || now() - start < seconds) {
    const struct timespec tick = {0, 20 * 1000 * 1000};
    nanosleep(&tick, NULL);
    printf("busy_loop: calls %ld\n", total_calls(threads));
    fflush(stdout);
  }
  atomic_store(&stop, 1);
  for (long t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  printf("busy_loop: done\n");
  return 0;
}
