// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the CLI robustness tests run under `dprobe run`; marker() is the
// function they probe:
//   cli_robustness env              prints "control=$DPROBE_CONTROL"
//   cli_robustness fds              prints "fd N TARGET" for each open fd
//   cli_robustness scribble MS N    calls marker() for MS milliseconds while
//                                   writing random words all over its own
//                                   trace memory (the "dprobe-trace" memfd),
//                                   then prints "scribbled" and exits N
//   cli_robustness sigint MS        counts SIGINT for MS milliseconds after
//                                   printing "ready", prints "sigint=COUNT"
//   cli_robustness calls MS N       calls marker() for MS milliseconds, then
//                                   says "calls: done" on stderr, exits N
//   cli_robustness senders          prints "ready", then "SIGNAL from PID"
//                                   for each SIGINT, SIGTERM and SIGHUP it
//                                   receives, until a SIGUSR1: "done", exit 0
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline, used)) int marker(int code) {
  static volatile int seen;
  seen += code;
  return seen;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int list_fds(void) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == NULL) return 1;
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    if (entry->d_name[0] == '.') continue;
    const int fd = atoi(entry->d_name);
    if (fd == dirfd(dir)) continue;
    char link[64];
    char target[PATH_MAX] = "";
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n > 0) target[n] = '\0';
    printf("fd %d %s\n", fd, target);
  }
  closedir(dir);
  return 0;
}

// The trace memory: the mapping of the agent's memfd.
static int find_trace_memory(uint64_t** start, size_t* words) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return -1;
  char line[512];
  int found = -1;
  while (fgets(line, sizeof(line), maps) != NULL) {
    unsigned long low = 0;
    unsigned long high = 0;
    if (strstr(line, "dprobe-trace") == NULL || sscanf(line, "%lx-%lx", &low, &high) != 2) continue;
    *start = (uint64_t*)low;
    *words = (high - low) / sizeof(uint64_t);
    found = 0;
    break;
  }
  fclose(maps);
  return found;
}

static int scribble(double ms, int status) {
  uint64_t* memory = NULL;
  size_t words = 0;
  marker(1);  // the agent maps its memory by the first hit at the latest
  if (find_trace_memory(&memory, &words) != 0) {
    fprintf(stderr, "scribble: no trace memory\n");
    return 3;
  }
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  const double end = now_ms() + ms;
  for (int i = 0; now_ms() < end; ++i) {
    for (int j = 0; j < 64; ++j) marker(i);
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    memory[(seed >> 33) % 64] = seed;  // the header and the first counters
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    memory[(seed >> 17) % words] = seed;  // anywhere: slots, ring controls, records
  }
  printf("scribbled\n");
  return status;
}

static volatile sig_atomic_t g_sigints;

static void count_sigint(int sig) {
  (void)sig;
  ++g_sigints;
}

static int count_sigints(double ms) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = count_sigint;
  sigaction(SIGINT, &sa, NULL);
  printf("ready\n");
  fflush(stdout);
  const double end = now_ms() + ms;
  while (now_ms() < end) {
    marker(0);
    usleep(1000);
  }
  printf("sigint=%d\n", (int)g_sigints);
  return 0;
}

// Each signal taken with its sender, in the order they come: none is lost
// to a handler, and a second one sent after the first was taken counts.
static int name_senders(void) {
  sigset_t set;
  sigemptyset(&set);
  const int watched[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1};
  for (size_t i = 0; i < sizeof(watched) / sizeof(watched[0]); ++i) sigaddset(&set, watched[i]);
  sigprocmask(SIG_BLOCK, &set, NULL);
  printf("ready\n");
  fflush(stdout);
  while (1) {
    siginfo_t info;
    const int sig = sigwaitinfo(&set, &info);
    if (sig < 0) continue;
    if (sig == SIGUSR1) break;
    printf("%s from %d\n",
           sig == SIGINT    ? "SIGINT"
           : sig == SIGTERM ? "SIGTERM"
                            : "SIGHUP",
           (int)info.si_pid);
    fflush(stdout);
  }
  printf("done\n");
  return 0;
}

static int calls(double ms, int status) {
  const double end = now_ms() + ms;
  for (int i = 0; now_ms() < end; ++i) marker(i);
  fprintf(stderr, "calls: done\n");
  return status;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* mode = argv[1];
  const double ms = argc > 2 ? atof(argv[2]) : 0;
  const int status = argc > 3 ? atoi(argv[3]) : 0;
  if (strcmp(mode, "env") == 0) {
    const char* control = getenv("DPROBE_CONTROL");
    printf("control=%s\n", control != NULL ? control : "");
    return 0;
  }
  if (strcmp(mode, "fds") == 0) return list_fds();
  if (strcmp(mode, "scribble") == 0) return scribble(ms, status);
  if (strcmp(mode, "sigint") == 0) return count_sigints(ms);
  if (strcmp(mode, "calls") == 0) return calls(ms, status);
  if (strcmp(mode, "senders") == 0) return name_senders();
  return 2;
}
