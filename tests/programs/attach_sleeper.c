// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Targets for the attach races (tests/integration/attach_races_test.cc):
//   attach_sleeper sleep MS      one nanosleep(MS) on the main thread, its
//                                result checked: "attach_sleeper: sleeping"
//                                before, then "attach_sleeper: slept R E MS"
//                                (R: nanosleep's return, E: errno, MS: the
//                                milliseconds it really slept)
//   attach_sleeper blocked MS    the same with every signal blocked (as in
//                                pthread_create's clone): "attach_sleeper:
//                                sleeping blocked" before it
//   attach_sleeper masked SECS   a worker with every signal blocked calls
//                                masked_probe() every 500 us for SECS:
//                                "attach_sleeper: masked ready", then
//                                "attach_sleeper: masked calls N"; a
//                                breakpoint it reached would kill it
//   attach_sleeper orphan SECS   main calls pthread_exit while a worker
//                                calls sleeper_probe() every 2 ms for SECS:
//                                "attach_sleeper: worker ready", then
//                                "attach_sleeper: worker calls N"
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline, used)) long sleeper_probe(long i) {
  static volatile long sink;
  sink += i;
  return sink;
}

__attribute__((noinline, used)) long masked_probe(long i) {
  static volatile long sink;
  sink += i;
  return sink;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void* worker(void* arg) {
  const double end = now_ms() + atof(arg) * 1e3;
  long calls = 0;
  printf("attach_sleeper: worker ready\n");
  while (now_ms() < end) {
    sleeper_probe(calls++);
    usleep(2000);
  }
  printf("attach_sleeper: worker calls %ld\n", calls);
  return NULL;
}

static void* masked_worker(void* arg) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  const double end = now_ms() + atof(arg) * 1e3;
  long calls = 0;
  masked_probe(calls++);
  printf("attach_sleeper: masked ready\n");
  while (now_ms() < end) {
    masked_probe(calls++);
    usleep(500);
  }
  printf("attach_sleeper: masked calls %ld\n", calls);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr,
            "usage: attach_sleeper sleep MS | blocked MS | masked SECONDS | orphan SECONDS\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(argv[1], "masked") == 0) {
    pthread_t thread;
    pthread_create(&thread, NULL, masked_worker, argv[2]);
    pthread_join(thread, NULL);
    return 0;
  }
  if (strcmp(argv[1], "orphan") == 0) {
    pthread_t thread;
    pthread_create(&thread, NULL, worker, argv[2]);
    pthread_exit(NULL);
  }
  const long ms = atol(argv[2]);
  struct timespec want = {ms / 1000, (ms % 1000) * 1000000L};
  struct timespec left = {0, 0};
  sleeper_probe(0);
  const int blocked = strcmp(argv[1], "blocked") == 0;
  if (blocked) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
  }
  printf("attach_sleeper: sleeping%s\n", blocked ? " blocked" : "");
  const double start = now_ms();
  const int result = nanosleep(&want, &left);
  const int error = result == 0 ? 0 : errno;
  printf("attach_sleeper: slept %d %d %.0f\n", result, error, now_ms() - start);
  return 0;
}
