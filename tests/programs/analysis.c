// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the analysis tests (--filter, --trigger, --stacktrace, $duration)
// trace: calls whose arguments follow a known distribution, a known call
// chain, and naps of known length. Built without frame pointers (see
// CMakeLists.txt): the stacks are unwound through .eh_frame alone.
//
//   analysis [THREADS]        each of THREADS threads (default 1) makes every
//                             call, then main naps and goes deep
//   analysis THREADS wait     the same, for attach: prints "analysis: ready
//                             PID" and waits for a SIGUSR1 before the threads
//                             start, prints "analysis: worked" when they are
//                             done and waits for another before the naps
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// Calls take(size, tag) for size = 1..kSizes, each `size % 7 + 1` times,
// tagged "alpha" when the size is even, "beta" otherwise.
enum { kSizes = 300 };

volatile unsigned long sink;

__attribute__((noinline)) void take(unsigned long size, const char* tag) {
  sink += size + (unsigned char)tag[0];
}

// leaf <- level1 <- level2 <- level3 <- chain: the stack the tests unwind.
__attribute__((noinline)) void leaf(int depth) { sink += (unsigned long)depth; }
__attribute__((noinline)) void level1(int depth) {
  leaf(depth + 1);
  sink++;
}
__attribute__((noinline)) void level2(int depth) {
  level1(depth + 1);
  sink++;
}
__attribute__((noinline)) void level3(int depth) {
  level2(depth + 1);
  sink++;
}

// bottom <- deep x (kDepth + 1) <- main: a stack deeper than an unwind goes
// (16 frames). Not a tail call: deep has work left after the call.
enum { kDepth = 24 };
__attribute__((noinline)) void bottom(int depth) { sink += (unsigned long)depth; }
__attribute__((noinline)) void deep(int depth) {
  if (depth > 0) {
    deep(depth - 1);
  } else {
    bottom(depth);
  }
  sink++;
}

__attribute__((noinline)) void nap(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

static void* work(void* arg) {
  (void)arg;
  for (unsigned long size = 1; size <= kSizes; ++size) {
    for (unsigned long i = 0; i < size % 7 + 1; ++i) take(size, size % 2 == 0 ? "alpha" : "beta");
  }
  for (int i = 0; i < 3; ++i) level3(0);
  return NULL;
}

// In wait mode: says `what` and waits for the next SIGUSR1 (blocked, so
// one sent before the wait is not lost).
static void wait_for_go(const char* what) {
  sigset_t go;
  sigemptyset(&go);
  sigaddset(&go, SIGUSR1);
  printf("analysis: %s\n", what);
  fflush(stdout);
  int sig = 0;
  while (sigwait(&go, &sig) != 0 || sig != SIGUSR1) {
  }
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 1;
  const int wait = argc > 2 && strcmp(argv[2], "wait") == 0;
  if (wait) {
    sigset_t go;
    sigemptyset(&go);
    sigaddset(&go, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &go, NULL);
    char ready[64];
    snprintf(ready, sizeof(ready), "ready %d", (int)getpid());
    wait_for_go(ready);
  }
  pthread_t ids[64];
  for (int i = 0; i < threads && i < 64; ++i) pthread_create(&ids[i], NULL, work, NULL);
  for (int i = 0; i < threads && i < 64; ++i) pthread_join(ids[i], NULL);
  if (wait) wait_for_go("worked");
  // 10 ms twice and 40 ms once: log2 buckets 2^24 and 2^26 of nanoseconds.
  nap(10);
  nap(10);
  nap(40);
  deep(kDepth);
  printf("analysis: ok\n");
  return 0;
}
