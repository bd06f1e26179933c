// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Recursion for tests/integration/return_recursion_test.cc:
//   ret_recursion DEPTH TIMES
// calls rec(DEPTH) TIMES times; rec(n) calls rec(n - 1) (through a volatile
// function pointer, so that no optimization turns the recursion into a
// loop) down to rec(0), and answers n + (n - 1) + ... + 0. So one top-level
// call is DEPTH + 1 calls of rec, nested DEPTH + 1 deep, rec(DEPTH) the
// outermost. Between two top-level calls, leaf(i) is called once (i = 0,
// 1, ...) and answers i * 7. Each rec frame holds FRAME bytes (the third
// argument, default 0) of stack of its own.
// Prints "recursion: ok" and exits 0 when every answer was right; "FAIL
// what" on stderr and exit 1 otherwise.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBED __attribute__((noinline, used))

volatile long sink;
static long frame_bytes;

PROBED long rec(long n);
static long (*volatile rec_pointer)(long) = rec;

PROBED long rec(long n) {
  if (n == 0) return 0;
  if (frame_bytes != 0) {
    volatile char* pad = __builtin_alloca(frame_bytes);
    pad[0] = (char)n;
    pad[frame_bytes - 1] = (char)n;
  }
  return rec_pointer(n - 1) + n;
}

PROBED long leaf(long i) {
  sink += i;
  return i * 7;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: ret_recursion DEPTH TIMES [FRAME]\n");
    return 2;
  }
  const long depth = strtol(argv[1], NULL, 10);
  const long times = strtol(argv[2], NULL, 10);
  if (argc > 3) frame_bytes = strtol(argv[3], NULL, 10);
  int failures = 0;
  for (long t = 0; t < times; ++t) {
    if (rec(depth) != depth * (depth + 1) / 2) {
      fprintf(stderr, "FAIL rec(%ld)\n", depth);
      ++failures;
    }
    if (leaf(t) != t * 7) {
      fprintf(stderr, "FAIL leaf(%ld)\n", t);
      ++failures;
    }
  }
  if (failures != 0) return 1;
  printf("recursion: ok\n");
  return 0;
}
