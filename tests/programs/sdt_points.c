// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// SDT probe points (<sys/sdt.h>) for tests/oracle/run_sdt.sh and
// tests/integration/sdt_test.cc: operands in registers, in memory on the
// stack, constants, a global variable, a string, a point with two sites,
// and a point guarded by a semaphore.
//   sdt_points [ROUNDS [STOP]]
// Runs its loop ROUNDS times (default 5), then prints how often the
// guarded point's semaphore let it through (0 untraced). With STOP, a
// file: prints "ready", then runs rounds until STOP exists, and prints
// the rounds, the guarded ones and the semaphore's value at the end (0
// once every tracer has let go).
//
// Built a second time with -DSDT_NO_SEMAPHORES (sdt_plain_O2): the notes
// then name no semaphore, and the guarded point is not guarded.
#ifndef SDT_NO_SEMAPHORES
#define _SDT_HAS_SEMAPHORES 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>

#ifndef SDT_NO_SEMAPHORES
// With semaphores, sdt.h names one for every point of the file,
// PROVIDER_NAME_semaphore in .probes: a tracer counts it up while it
// traces the point. Only `guarded` tests its own.
#define SEMAPHORE(name)                                                               \
  __extension__ unsigned short dprobe_test_##name##_semaphore __attribute__((unused)) \
  __attribute__((section(".probes")))
SEMAPHORE(values);
SEMAPHORE(text);
SEMAPHORE(guarded);
SEMAPHORE(twice);
#define GUARD_OPEN dprobe_test_guarded_semaphore
#else
#define GUARD_OPEN 1
#endif

long counter = 1000;
static const char* const kWords[] = {"alpha", "beta", "gamma delta", ""};

__attribute__((noinline)) static void point_values(int i, long big, short small) {
  // In a register: arm64's GCC would name the global by an address the
  // assembler computes ([x3, #:lo12:.LANCHOR1]), which no note gives.
  long now = counter;
  __asm__("" : "+r"(now));
  DTRACE_PROBE4(dprobe_test, values, i, big, small, now);
}

__attribute__((noinline)) static void point_text(int i) {
  const char* word = kWords[i % 4];
  DTRACE_PROBE3(dprobe_test, text, word, -i, 42);
}

__attribute__((noinline)) static int point_guarded(int i) {
  if (GUARD_OPEN) {
    DTRACE_PROBE1(dprobe_test, guarded, i * 3);
    return 1;
  }
  return 0;
}

// One point, two sites: a probe on it is two probes.
__attribute__((noinline)) static void point_twice(int i) {
  if (i % 2 == 0) {
    DTRACE_PROBE1(dprobe_test, twice, i);
  } else {
    DTRACE_PROBE1(dprobe_test, twice, -i);
  }
}

static int round_of(int i) {
  counter += i;
  point_values(i, -1000000000L * i, (short)(-300 + i));
  point_text(i);
  const int guarded = point_guarded(i);
  point_twice(i);
  return guarded;
}

// Rounds a millisecond apart until `stop` exists.
static int run_until(const char* stop) {
  printf("ready\n");
  fflush(stdout);
  int rounds = 0;
  int guarded = 0;
  const struct timespec pause = {0, 1000000};
  while (access(stop, F_OK) != 0) {
    guarded += round_of(rounds++ % 1000);
    nanosleep(&pause, NULL);
  }
  printf("rounds %d guarded %d semaphore %d\n", rounds, guarded, (int)GUARD_OPEN);
  return 0;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 5;
  if (argc > 2) return run_until(argv[2]);
  int guarded = 0;
  for (int i = 0; i < rounds; ++i) guarded += round_of(i);
  printf("guarded %d\n", guarded);
  return 0;
}
