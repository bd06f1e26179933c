// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// System calls with known arguments and results, for the syscall tests
// (tests/integration/syscall_*_test.cc). Each call is made with syscall(2),
// so its registers are exactly the arguments written here.
//   syscall_calls known          getppid, openat("/dev/null", O_RDONLY |
//                                O_CLOEXEC), close of it, openat of a
//                                missing path (-ENOENT), sched_yield (no
//                                arguments), getppid; then prints "syscall_calls:
//                                pid PID ppid P fd F null 0xADDR missing 0xADDR"
//   syscall_calls strings        one buffer for two paths: "/dev/null" opened,
//                                then "/nonexistent/dprobe-reused" (-ENOENT),
//                                then the buffer overwritten; prints
//                                "syscall_calls: strings fd F"
//   syscall_calls getppid N      N getppid calls; prints "syscall_calls: getppid N"
//   syscall_calls threads T N    main makes one getppid call, then T threads
//                                (at most 64) make N each, all started
//                                together; prints "syscall_calls: tid TID"
//                                per thread
// Exits 0 when every call returned what it should; 1 otherwise.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char kNull[] = "/dev/null";
static const char kMissing[] = "/nonexistent/dprobe-syscall-test";

static int known_calls(void) {
  const long ppid = syscall(SYS_getppid);
  const long fd = syscall(SYS_openat, AT_FDCWD, kNull, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0 || syscall(SYS_close, fd) != 0) return 1;
  errno = 0;
  if (syscall(SYS_openat, AT_FDCWD, kMissing, O_RDONLY, 0) != -1 || errno != ENOENT) return 1;
  if (syscall(SYS_sched_yield) != 0 || syscall(SYS_getppid) != ppid) return 1;
  printf("syscall_calls: pid %d ppid %ld fd %ld null %p missing %p\n", (int)getpid(), ppid, fd,
         (const void*)kNull, (const void*)kMissing);
  return 0;
}

// What an event probe copied at each call is the path of that call, not
// what the buffer holds by the time the trace is read.
static int reused_buffer(void) {
  static char path[64];
  strcpy(path, kNull);
  const long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
  strcpy(path, "/nonexistent/dprobe-reused");
  if (fd < 0 || syscall(SYS_openat, AT_FDCWD, path, O_RDONLY, 0) != -1) return 1;
  memset(path, 'x', sizeof(path) - 1);
  printf("syscall_calls: strings fd %ld\n", fd);
  return close((int)fd);
}

static int getppid_calls(long n) {
  const long ppid = syscall(SYS_getppid);
  for (long i = 1; i < n; ++i) {
    if (syscall(SYS_getppid) != ppid) return 1;
  }
  printf("syscall_calls: getppid %ld\n", n);
  return 0;
}

// ---- threads -------------------------------------------------------------------

static pthread_barrier_t start_line;
static long calls_per_thread;
static long parent_pid;  // read once by main: the workers make exactly their N calls

struct Worker {
  pthread_t thread;
  long tid;
  int failed;
};

static void* worker(void* arg) {
  struct Worker* self = arg;
  self->tid = syscall(SYS_gettid);
  pthread_barrier_wait(&start_line);  // every thread's calls overlap the others'
  for (long i = 0; i < calls_per_thread; ++i) {
    if (syscall(SYS_getppid) != parent_pid) self->failed = 1;
  }
  return NULL;
}

static int thread_calls(long threads, long n) {
  static struct Worker workers[64];
  if (threads < 1 || threads > 64) return 1;
  calls_per_thread = n;
  parent_pid = syscall(SYS_getppid);
  pthread_barrier_init(&start_line, NULL, (unsigned)threads);
  for (long t = 0; t < threads; ++t) {
    if (pthread_create(&workers[t].thread, NULL, worker, &workers[t]) != 0) return 1;
  }
  int failed = 0;
  for (long t = 0; t < threads; ++t) {
    pthread_join(workers[t].thread, NULL);
    failed |= workers[t].failed;
    printf("syscall_calls: tid %ld\n", workers[t].tid);
  }
  return failed;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "known";
  if (strcmp(mode, "known") == 0) return known_calls();
  if (strcmp(mode, "strings") == 0) return reused_buffer();
  if (strcmp(mode, "getppid") == 0 && argc > 2) return getppid_calls(atol(argv[2]));
  if (strcmp(mode, "threads") == 0 && argc > 3) return thread_calls(atol(argv[2]), atol(argv[3]));
  fprintf(stderr, "usage: syscall_calls known | strings | getppid N | threads T N\n");
  return 2;
}
