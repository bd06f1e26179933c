// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Probed calls at the edges of a program's life, for
// tests/integration/lifetime_test.cc. `lifetime MODE`:
//   fini     marker(1) in main, marker(2) in an atexit handler, marker(3) in
//            a destructor (run by the loader after every atexit handler);
//            the destructor prints "lifetime: fini" last
//   threads  4 threads call marker(4) without end; once each has made 1000
//            calls, main returns while they still run, with 16384 lines of
//            64 bytes in the stdout buffer (written out at exit, while the
//            threads still call marker)
//   detached 256 detached threads, each mallocs and frees, then exits (the
//            C library frees its stack with madvise, with every signal
//            blocked); once all have ended main prints "lifetime: detached"
// Exits 0.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline, used)) int marker(int code) {
  static volatile int seen;
  seen += code;
  return seen;
}

static int fini_mode;

static void at_exit(void) { marker(2); }

__attribute__((destructor)) static void at_fini(void) {
  if (!fini_mode) return;
  marker(3);
  static const char kFini[] = "lifetime: fini\n";
  if (write(1, kFini, sizeof(kFini) - 1) < 0) _exit(3);
}

#define THREADS 4
static atomic_long calls[THREADS];

static void* spin(void* arg) {
  const long t = (long)arg;
  for (;;) {
    marker(4);
    atomic_fetch_add(&calls[t], 1);
  }
  return NULL;
}

#define DETACHED 256
static atomic_int ended;

static void* short_life(void* arg) {
  free(malloc(64 + (size_t)arg));
  atomic_fetch_add(&ended, 1);
  return NULL;
}

static int run_detached(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (long t = 0; t < DETACHED; ++t) {
    pthread_t id;
    if (pthread_create(&id, &attr, short_life, (void*)t) != 0) return 1;
    if (t % 32 == 31) usleep(1000);  // a few at a time: stacks are reused
  }
  while (atomic_load(&ended) < DETACHED) usleep(1000);
  usleep(100000);  // their exits, after the count
  printf("lifetime: detached\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  if (strcmp(argv[1], "fini") == 0) {
    fini_mode = 1;
    atexit(at_exit);
    marker(1);
    return 0;
  }
  if (strcmp(argv[1], "detached") == 0) return run_detached();
  if (strcmp(argv[1], "threads") == 0) {
    pthread_t id;
    for (long t = 0; t < THREADS; ++t) {
      if (pthread_create(&id, NULL, spin, (void*)t) != 0) return 1;
    }
    static char buffer[1 << 21];
    setvbuf(stdout, buffer, _IOFBF, sizeof(buffer));
    for (int i = 0; i < 16384; ++i) printf("%063d\n", i);
    for (long t = 0; t < THREADS; ++t) {
      while (atomic_load(&calls[t]) < 1000) sched_yield();
    }
    return 0;
  }
  return 2;
}
