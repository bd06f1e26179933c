// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A running program whose threads make system calls, to attach to
// (tests/integration/syscall_attach_test.cc):
//   syscall_attach SECONDS
// Three threads, each in rounds: getppid (checked against the parent's
// pid), a write of 8 bytes to its own pipe and the read of them back
// (checked), then a 2 ms sleep. Once every thread has made a round, main
// prints "syscall_attach: ready PID tids A B C", then every 20 ms
// "syscall_attach: rounds R bad B" (B: calls that returned what they
// should not). After SECONDS the threads stop; main prints
// "syscall_attach: done rounds R bad B" and exits 0 when B is 0, else 1.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define THREADS 3

static atomic_long rounds[THREADS];
static atomic_long bad;
static atomic_int stop;
static long parent_pid;
static long tids[THREADS];

// Sleeps `ms` whole, through the signals that attaching sends.
static void sleep_ms(long ms) {
  struct timespec left = {0, ms * 1000000};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

static int one_round(const int fds[2], long round) {
  if (syscall(SYS_getppid) != parent_pid) return 0;
  char sent[8];
  char got[8];
  memcpy(sent, &round, sizeof(sent));
  if (write(fds[1], sent, sizeof(sent)) != (ssize_t)sizeof(sent)) return 0;
  if (read(fds[0], got, sizeof(got)) != (ssize_t)sizeof(got)) return 0;
  return memcmp(sent, got, sizeof(got)) == 0;
}

static void* worker(void* arg) {
  const long t = (long)arg;
  tids[t] = syscall(SYS_gettid);
  int fds[2];
  if (pipe(fds) != 0) atomic_fetch_add(&bad, 1);
  for (long round = 0; !atomic_load(&stop); ++round) {
    if (!one_round(fds, round)) atomic_fetch_add(&bad, 1);
    atomic_fetch_add(&rounds[t], 1);
    sleep_ms(2);
  }
  return NULL;
}

static long total_rounds(void) {
  long total = 0;
  for (int t = 0; t < THREADS; ++t) total += atomic_load(&rounds[t]);
  return total;
}

static int every_thread_started(void) {
  for (int t = 0; t < THREADS; ++t) {
    if (atomic_load(&rounds[t]) == 0) return 0;
  }
  return 1;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 10;
  parent_pid = getppid();
  pthread_t threads[THREADS];
  for (long t = 0; t < THREADS; ++t) pthread_create(&threads[t], NULL, worker, (void*)t);
  while (!every_thread_started()) sleep_ms(1);
  printf("syscall_attach: ready %d tids %ld %ld %ld\n", (int)getpid(), tids[0], tids[1], tids[2]);
  fflush(stdout);
  const double end = now() + seconds;
  while (now() < end) {
    sleep_ms(20);
    printf("syscall_attach: rounds %ld bad %ld\n", total_rounds(), atomic_load(&bad));
    fflush(stdout);
  }
  atomic_store(&stop, 1);
  for (int t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
  printf("syscall_attach: done rounds %ld bad %ld\n", total_rounds(), atomic_load(&bad));
  return atomic_load(&bad) == 0 ? 0 : 1;
}
