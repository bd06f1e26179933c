// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Threads with return-probed calls, for
// tests/integration/return_threads_test.cc:
//   ret_threads MODE
// MODE:
//   exit     a thread calls nest(3, 0): nest(3) .. nest(0) (4 probed
//            frames), and nest(0) calls pthread_exit((void*)77) from inside
//            them; main joins it and checks 77. Meanwhile main calls
//            work(-1, i) for i = 0 .. 999. The thread makes its exit in
//            the kernel last well past the join (linger_in_exit).
//   cancel   a thread calls nest(3, 1): nest(0) tells main it is there and
//            blocks in read() (a cancellation point) on a pipe nobody
//            writes; main cancels it and joins it (PTHREAD_CANCELED), then
//            calls work(-1, i) for i = 0 .. 999.
//   many     8 threads, together, each calls work(t, i) for i = 0 ..
//            9999; work(t, i) answers t * 1000000 + i.
//   crowd    300 threads (more than dprobe's 256 ring slots), all alive
//            together, each calls work(t, 0) once and waits until all
//            have made their call before it exits.
//   churn    4,000 threads one after another, each calls work(t, 0) once
//            and exits before the next starts.
//   waves    21 waves of 200 threads, all of a wave alive together; each
//            thread calls nest(7, 2) (8 probed frames) once and waits
//            until its whole wave has before it exits; 120 ms between
//            waves. 4,200 threads x 8 returns: more than the 32,768
//            return instances dprobe has, unless exited threads give
//            theirs back.
// In exit and cancel mode, after the join, main calls nest(3, 2) (4
// returns: nest(n) answers n + nest(n - 1), nest(0) 0) and a second thread
// does the same and exits normally. Each thread's nest frames unwind
// through a cleanup handler that counts (pthread_cleanup_push in nest(1)).
// Prints "threads: ok" and exits 0 when every check holds; "FAIL what" on
// stderr and exit 1 otherwise.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#define PROBED __attribute__((noinline, used))

static volatile long sink;
static int failures;
static int block_fds[2];
static int ready_fds[2];
static volatile int cleanups;
static pthread_barrier_t start;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAIL %s\n", what);
    ++failures;
  }
}

PROBED long work(long t, long i) {
  sink += i;
  return t * 1000000 + i;
}

static void count_cleanup(void* arg) {
  (void)arg;
  __atomic_add_fetch(&cleanups, 1, __ATOMIC_SEQ_CST);
}

PROBED long nest(long n, long how);
static long (*volatile nest_pointer)(long, long) = nest;

// Gives the calling thread a descriptor table of its own, with many
// descriptors: the kernel closes them in the thread's exit after it has
// woken the joiner (it lets go of the memory, and clears the thread's id,
// first). The program then exits while this thread is still in the
// kernel, gone for the program but still there for a signal 0: the window
// in which dprobe must count the thread's live instances as misses.
static void linger_in_exit(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max < 200000 ? limit.rlim_max : 200000;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  if (unshare(CLONE_FILES) != 0) return;
  const int fd = open("/dev/null", O_RDONLY);
  for (int i = 0; fd >= 0 && i < 200000 && dup(fd) >= 0; ++i) {
  }
}

// how: 0 pthread_exit in nest(0), 1 block in read() in nest(0), 2 return.
PROBED long nest(long n, long how) {
  if (n == 0) {
    if (how == 0) {
      linger_in_exit();
      pthread_exit((void*)77);
    }
    if (how == 1) {
      char byte = 0;
      if (write(ready_fds[1], &byte, 1) != 1) check(0, "write ready");
      for (;;) {
        if (read(block_fds[0], &byte, 1) <= 0) check(0, "read returned");
      }
    }
    return 0;
  }
  long result = 0;
  if (n == 1) {
    pthread_cleanup_push(count_cleanup, NULL);
    result = nest_pointer(n - 1, how) + n;
    pthread_cleanup_pop(0);
  } else {
    result = nest_pointer(n - 1, how) + n;
  }
  return result;
}

static void* leave(void* arg) {
  nest(3, (long)arg);
  check(0, "nest returned in a leaving thread");
  return NULL;
}

static void* normal(void* arg) {
  (void)arg;
  check(nest(3, 2) == 6, "nest(3, 2) in a thread");
  return (void*)5;
}

static void* many(void* arg) {
  const long t = (long)arg;
  pthread_barrier_wait(&start);
  for (long i = 0; i < 10000; ++i) {
    if (work(t, i) != t * 1000000 + i) check(0, "work");
  }
  return NULL;
}

static void* crowd(void* arg) {
  const long t = (long)arg;
  pthread_barrier_wait(&start);
  if (work(t, 0) != t * 1000000) check(0, "work");
  pthread_barrier_wait(&start);
  return NULL;
}

static void* wave_member(void* arg) {
  (void)arg;
  pthread_barrier_wait(&start);
  if (nest(7, 2) != 28) check(0, "nest(7, 2)");
  pthread_barrier_wait(&start);
  return NULL;
}

static void* churn_member(void* arg) {
  const long t = (long)arg;
  if (work(t, 0) != t * 1000000) check(0, "work");
  return NULL;
}

static int churn(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 17);
  for (long t = 0; t < 4000; ++t) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, churn_member, (void*)t) != 0) return 2;
    pthread_join(thread, NULL);
  }
  return 0;
}

static int waves(void) {
  enum { kWaves = 21, kWave = 200 };
  pthread_t threads[kWave];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 17);
  pthread_barrier_init(&start, NULL, kWave);
  for (int w = 0; w < kWaves; ++w) {
    for (int t = 0; t < kWave; ++t) {
      if (pthread_create(&threads[t], &attr, wave_member, NULL) != 0) return 2;
    }
    for (int t = 0; t < kWave; ++t) pthread_join(threads[t], NULL);
    struct timespec pause = {0, 120 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  return 0;
}

static void then_normally(void) {
  check(nest(3, 2) == 6, "nest(3, 2)");
  pthread_t thread;
  void* result = NULL;
  pthread_create(&thread, NULL, normal, NULL);
  pthread_join(thread, &result);
  check(result == (void*)5, "normal thread's result");
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "many";
  if (strcmp(mode, "many") == 0) {
    pthread_t threads[8];
    pthread_barrier_init(&start, NULL, 8);
    for (long t = 0; t < 8; ++t) pthread_create(&threads[t], NULL, many, (void*)t);
    for (long t = 0; t < 8; ++t) pthread_join(threads[t], NULL);
  } else if (strcmp(mode, "crowd") == 0) {
    enum { kCrowd = 300 };
    static pthread_t threads[kCrowd];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 17);
    pthread_barrier_init(&start, NULL, kCrowd);
    for (long t = 0; t < kCrowd; ++t) {
      if (pthread_create(&threads[t], &attr, crowd, (void*)t) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 2;
      }
    }
    for (long t = 0; t < kCrowd; ++t) pthread_join(threads[t], NULL);
  } else if (strcmp(mode, "churn") == 0) {
    if (churn() != 0) return 2;
  } else if (strcmp(mode, "waves") == 0) {
    if (waves() != 0) return 2;
  } else if (strcmp(mode, "exit") == 0) {
    pthread_t thread;
    void* result = NULL;
    pthread_create(&thread, NULL, leave, (void*)0);
    for (long i = 0; i < 1000; ++i) check(work(-1, i) == -1000000 + i, "work");
    pthread_join(thread, &result);
    check(result == (void*)77, "pthread_exit's value");
    check(cleanups == 1, "the cleanup handler ran");
    then_normally();
  } else if (strcmp(mode, "cancel") == 0) {
    if (pipe(block_fds) != 0 || pipe(ready_fds) != 0) return 2;
    pthread_t thread;
    void* result = NULL;
    pthread_create(&thread, NULL, leave, (void*)1);
    char byte = 0;
    check(read(ready_fds[0], &byte, 1) == 1, "the thread is in nest(0)");
    pthread_cancel(thread);
    pthread_join(thread, &result);
    check(result == PTHREAD_CANCELED, "the thread was cancelled");
    check(cleanups == 1, "the cleanup handler ran");
    for (long i = 0; i < 1000; ++i) check(work(-1, i) == -1000000 + i, "work");
    then_normally();
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (failures != 0) return 1;
  printf("threads: ok\n");
  return 0;
}
