// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Many threads calling one probed function, for exact hit counts:
//   threads [THREADS [CALLS [MODE]]]      (default: 8 threads x 100000 calls)
// thread t calls work(t, i) for i = 0 .. CALLS-1, in order. MODE:
//   together  the threads start together (the default)
//   serial    one thread after another, each joined before the next starts
//   named     together, each thread named "worker-T" before its calls
//   rename    no threads: main calls work(-1, 0), renames itself "renamed",
//             then calls work(-1, 1)
// Prints "threads: ok" and exits 0.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#define MAX_THREADS 1024

static __thread volatile long thread_sink;
static pthread_barrier_t start;
static long calls = 100000;
static int together = 1;
static int named;

__attribute__((noinline, used)) long work(long thread, long i) { return thread_sink += thread + i; }

static void* run(void* arg) {
  const long thread = (long)arg;
  if (named) {
    char name[16];
    snprintf(name, sizeof(name), "worker-%ld", thread);
    pthread_setname_np(pthread_self(), name);
  }
  if (together) pthread_barrier_wait(&start);
  for (long i = 0; i < calls; ++i) work(thread, i);
  return NULL;
}

int main(int argc, char** argv) {
  long threads = 8;
  if (argc > 1) threads = strtol(argv[1], NULL, 10);
  if (argc > 2) calls = strtol(argv[2], NULL, 10);
  const char* mode = argc > 3 ? argv[3] : "together";
  if (strcmp(mode, "rename") == 0) {
    work(-1, 0);
    prctl(PR_SET_NAME, "renamed", 0, 0, 0);
    work(-1, 1);
    printf("threads: ok\n");
    return 0;
  }
  together = strcmp(mode, "serial") != 0;
  named = strcmp(mode, "named") == 0;
  if (threads < 1 || threads > MAX_THREADS || calls < 0) return 2;
  if (together && threads > 64) return 2;
  static pthread_t ids[MAX_THREADS];
  if (together) pthread_barrier_init(&start, NULL, (unsigned)threads);
  for (long t = 0; t < threads; ++t) {
    if (pthread_create(&ids[t], NULL, run, (void*)t) != 0) return 1;
    if (!together) pthread_join(ids[t], NULL);
  }
  if (together) {
    for (long t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  }
  printf("threads: ok\n");
  return 0;
}
