// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// longjmp and siglongjmp out of probed frames, for
// tests/integration/return_jumps_test.cc:
//   ret_jumps MODE [JUMPS [FRAME]]
// MODE:
//   longjmp     jumper(3) recurses to jumper(0), which longjmps back to
//               main: 4 probed frames left without returning, per jump
//   siglongjmp  the same, but jumper(0) raises SIGUSR1 and the handler
//               siglongjmps back (the signal mask is restored: checked)
//   handler     as siglongjmp, and the handler first calls other(1000 + j)
//               (which returns normally) before it jumps
// Each of JUMPS (default 20) rounds: main calls other(j) (returns
// normally), then jumper(3) once, which jumps out. After the rounds main
// calls jumper(3) with jumping off, 3 times (4 returns each), then other(j)
// for j = 100, 101, 102. jumper(n) answers n + jumper(n - 1) (jumper(0):
// 0) and other(j) answers j * 3. Each jumper frame holds FRAME bytes of
// stack of its own (default 0).
// Prints "jumps: ok" and exits 0 when every check holds; "FAIL what" on
// stderr and exit 1 otherwise.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBED __attribute__((noinline, used))

volatile long sink;
static int failures;
static int jumping;
static int use_signal;
static int handler_calls_other;
static long frame_bytes;
static jmp_buf env;
static sigjmp_buf sigenv;
static volatile int round_number;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAIL %s\n", what);
    ++failures;
  }
}

PROBED long other(long j) {
  sink += j;
  return j * 3;
}

PROBED long jumper(long n);
static long (*volatile jumper_pointer)(long) = jumper;

PROBED long jumper(long n) {
  if (frame_bytes != 0) {
    volatile char* pad = __builtin_alloca(frame_bytes);
    pad[0] = (char)n;
    pad[frame_bytes - 1] = (char)n;
  }
  if (n == 0) {
    if (jumping && use_signal) raise(SIGUSR1);
    if (jumping && !use_signal) longjmp(env, 1);
    return 0;
  }
  return jumper_pointer(n - 1) + n;
}

static void on_usr1(int sig) {
  (void)sig;
  if (handler_calls_other) check(other(1000 + round_number) == (1000 + round_number) * 3, "other");
  siglongjmp(sigenv, 1);
}

static void one_round(void) {
  if (use_signal) {
    if (sigsetjmp(sigenv, 1) == 0) {
      jumper(3);
      check(0, "jumper(3) returned instead of jumping");
    }
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    check(!sigismember(&now, SIGUSR1), "SIGUSR1 unblocked again by siglongjmp");
  } else if (setjmp(env) == 0) {
    jumper(3);
    check(0, "jumper(3) returned instead of jumping");
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "longjmp";
  const int jumps = argc > 2 ? atoi(argv[2]) : 20;
  if (argc > 3) frame_bytes = strtol(argv[3], NULL, 10);
  use_signal = strcmp(mode, "siglongjmp") == 0 || strcmp(mode, "handler") == 0;
  handler_calls_other = strcmp(mode, "handler") == 0;
  if (!use_signal && strcmp(mode, "longjmp") != 0) {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = on_usr1;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, NULL);

  jumping = 1;
  for (int j = 0; j < jumps; ++j) {
    round_number = j;
    check(other(j) == j * 3, "other");
    one_round();
  }
  jumping = 0;
  for (int i = 0; i < 3; ++i) check(jumper(3) == 6, "jumper(3)");
  for (long j = 100; j < 103; ++j) check(other(j) == j * 3, "other");
  if (failures != 0) return 1;
  printf("jumps: ok\n");
  return 0;
}
