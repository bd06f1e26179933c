// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A program that takes every descriptor number for itself, as daemons and
// sandboxes do at start (tests/integration/descriptors_test.cc):
//   fd_reuse MODE DIR SECONDS
// MODE says how it clears the numbers above stderr:
//   close_range  close_range(3, ~0U, 0)
//   loop         close(fd) for every fd from 3 to the soft RLIMIT_NOFILE
//   dup2         dup2 /dev/null over every one up to 1024 (or the soft
//                limit), then close every one up to the limit
// Then it opens DIR/file.0 .. DIR/file.7 (on the lowest numbers, where the
// agent's descriptors used to be) and, for SECONDS, every 2 ms calls
// fd_probe(i) and writes "K I\n" into file K = I % 8. SIGUSR1 makes it
// clear every number and open its files again (appending), as at start.
// It prints "fd_reuse: ready I" once its files are open (I: the first
// call after), and at the end "fd_reuse: open N" (how many of its 8
// descriptors are still its files) and "fd_reuse: calls I".
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILES 8

static int files[FILES];
static struct stat identity[FILES];
static atomic_int again;

__attribute__((noinline, used)) long fd_probe(long i) {
  static volatile long sink;
  sink += i;
  return sink;
}

static unsigned soft_limit(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur > 1u << 20) return 1u << 20;
  return (unsigned)limit.rlim_cur;
}

static void clear_numbers(const char* mode) {
  const unsigned limit = soft_limit();
  if (strcmp(mode, "close_range") == 0) {
    close_range(3, ~0U, 0);
  } else if (strcmp(mode, "loop") == 0) {
    for (unsigned fd = 3; fd < limit; ++fd) close((int)fd);
  } else {
    // Over the numbers a loop to 1024 reaches: with the hard limit equal
    // to the soft one, dup2 over every number up to the limit leaves the
    // agent no number at all (its session then ends, cleanly).
    const unsigned top = limit < 1024 ? limit : 1024;
    const int null = open("/dev/null", O_RDWR);
    for (unsigned fd = 3; fd < top; ++fd) {
      if ((int)fd != null) dup2(null, (int)fd);
    }
    for (unsigned fd = 3; fd < limit; ++fd) close((int)fd);
  }
}

static void open_files(const char* dir) {
  for (int k = 0; k < FILES; ++k) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/file.%d", dir, k);
    files[k] = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    fstat(files[k], &identity[k]);
  }
}

static int still_open(void) {
  int open_count = 0;
  for (int k = 0; k < FILES; ++k) {
    struct stat now;
    if (fstat(files[k], &now) == 0 && now.st_ino == identity[k].st_ino &&
        now.st_dev == identity[k].st_dev) {
      ++open_count;
    }
  }
  return open_count;
}

static void on_usr1(int sig) {
  (void)sig;
  atomic_store(&again, 1);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: fd_reuse close_range|loop|dup2 DIR SECONDS\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IONBF, 0);
  signal(SIGUSR1, on_usr1);
  long i = 0;
  for (; i < 10; ++i) fd_probe(i);
  clear_numbers(argv[1]);
  open_files(argv[2]);
  printf("fd_reuse: ready %ld\n", i);
  const double end = now() + atof(argv[3]);
  while (now() < end) {
    if (atomic_exchange(&again, 0)) {
      clear_numbers(argv[1]);
      open_files(argv[2]);
      printf("fd_reuse: reopened %ld\n", i);
    }
    fd_probe(i);
    char line[64];
    const int n = snprintf(line, sizeof(line), "%ld %ld\n", i % FILES, i);
    if (write(files[i % FILES], line, (size_t)n) != n) printf("fd_reuse: write %ld failed\n", i);
    ++i;
    usleep(2000);
  }
  printf("fd_reuse: open %d\n", still_open());
  printf("fd_reuse: calls %ld\n", i);
  return 0;
}
