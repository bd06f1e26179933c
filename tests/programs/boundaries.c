// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Functions to put a probe on every instruction boundary of
// (tests/integration/every_boundary_test.cc): loops, branches, a switch
// (a jump table at -O2), RIP-relative loads and stores, calls, a
// recursion. None calls into libc, so that single-stepping run_all counts
// every instruction of theirs and nothing else.
//   boundaries ROUNDS
// main calls run_all(ROUNDS) and prints "boundaries: result N".
#include <stdio.h>
#include <stdlib.h>

#define PROBED __attribute__((noinline, used))

long table[64];
static const long kConstants[8] = {3, 1, 4, 1, 5, 9, 2, 6};
volatile long counter;

PROBED long sum_loop(long n) {
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += table[i & 63] * (i ^ 3);
  return sum;
}

PROBED long branches(long x) {
  if (x & 1) {
    x = x * 3 + 1;
  } else {
    x >>= 1;
  }
  if (x > 100) x -= 7;
  return x < 0 ? -x : x;
}

PROBED long switcher(long x) {
  switch (x % 9) {
    case 0:
      return x + 11;
    case 1:
      return x * 5;
    case 2:
      return x - 3;
    case 3:
      return x ^ 0x55;
    case 4:
      return x << 2;
    case 5:
      return kConstants[x & 7];
    case 6:
      return table[x & 63];
    case 7:
      return -x;
    default:
      return 1;
  }
}

PROBED long rip_loads(long x) {
  table[x & 63] += kConstants[(x >> 3) & 7];
  counter = counter + 1;
  return table[(x + 1) & 63] + counter;
}

PROBED long nested(long n) {
  long sum = 0;
  for (long i = 0; i < n; ++i) {
    for (long j = 0; j < i; ++j) sum += (i * j) & 7;
  }
  return sum;
}

PROBED long recurse(long n) { return n <= 1 ? 1 : n + recurse(n - 1); }

PROBED long calls(long x) { return branches(x) + sum_loop(x & 7) + recurse(x & 3); }

PROBED long run_all(long rounds) {
  long result = 0;
  for (long k = 0; k < rounds; ++k) {
    result += sum_loop(k % 17);
    result ^= branches(k);
    result += calls(k);
    result += switcher(k);
    result += rip_loads(k);
    result += nested(k % 5);
  }
  return result;
}

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
  for (long i = 0; i < 64; ++i) table[i] = i * 7 - 20;
  printf("boundaries: result %ld\n", run_all(rounds));
  return 0;
}
