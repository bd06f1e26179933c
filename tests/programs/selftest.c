// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The program the shell selftests (tests/selftests) trace, on the host and
// in the kernels booted in QEMU. Everything is deterministic: each function
// is called a fixed number of times with fixed values, and the cases know
// them (the numbers below are repeated in tests/selftests/cases/*.tc).
//
//   selftest_O0            runs everything, prints "selftest: ok 3269" (a sum)
//   selftest_O0 STATUS     the same, then exits with STATUS
//
// st_step is the probepoint function: straight-line code (no branch), so
// every one of its instructions runs on every call; the build writes the
// offset of each (tests/selftests/gen_data.sh).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROBED __attribute__((noinline, used))

// A record of every scalar type; its layout (little-endian, LP64) is the
// same on x86_64 and arm64. Offsets are what the cases dereference.
struct sample {
  uint8_t u8;                // 0
  int8_t s8;                 // 1
  uint16_t u16;              // 2
  uint32_t u32;              // 4
  uint64_t u64;              // 8
  int16_t s16;               // 16
  char ch;                   // 18
  int32_t s32;               // 20
  int64_t s64;               // 24
  uint32_t bits;             // 32: lo = bits 0-2, mid = bits 3-7, hi = bits 8-19
  uint16_t arr[4];           // 36
  const char* name;          // 48
  void (*fn)(void);          // 56
  const char* const* words;  // 64
};
_Static_assert(__builtin_offsetof(struct sample, s16) == 16, "layout");
_Static_assert(__builtin_offsetof(struct sample, bits) == 32, "layout");
_Static_assert(__builtin_offsetof(struct sample, arr) == 36, "layout");
_Static_assert(__builtin_offsetof(struct sample, name) == 48, "layout");
_Static_assert(__builtin_offsetof(struct sample, fn) == 56, "layout");
_Static_assert(__builtin_offsetof(struct sample, words) == 64, "layout");

volatile long sink;

// For @SYM and RIP-relative loads in st_step.
long st_counter = 42;
char st_label[] = "selftest-label";

PROBED void st_callback(void) { sink += 1; }

// Never called: an event on it has no hit.
PROBED void st_never(void) { sink -= 1; }

PROBED long st_leaf(long x) { return x + 1; }

// Called 5 times, with a = 1..5, b = 10.
PROBED long st_step(long a, long b) {
  long c = a * 3 + st_counter;
  c = st_leaf(c) ^ b;
  return c - (a >> 1);
}

// Called twice with the same record.
PROBED long st_sample(const struct sample* s) { return sink += s->u8 + s->arr[0]; }

// Called 3 times: ("alpha", 'a'), ("beta", 'b'), ("gamma", 'g').
PROBED long st_string(const char* text, char mark) { return sink += text[0] + mark; }

// Returns 2 * x + 1; called 4 times with x = 0..3.
PROBED long st_twice(long x) { return 2 * x + 1; }

// Recursion: st_depth(n) calls st_depth(n - 1) down to 0; called once with
// 4, so 5 instances of it are live at the deepest point. Returns n.
PROBED long st_depth(long n) {
  if (n == 0) return 0;
  const long below = st_depth(n - 1);
  sink += below;  // after the call: keeps the recursion a recursion at -O2
  return below + 1;
}

// Called v % 5 + 1 times for each v = 1..200 (600 calls), tagged "even"
// or "odd": the distribution tests/selftests/cases/hist_oracle.tc
// aggregates with the kernel's hist triggers and with dprobe's.
PROBED long hist_value(unsigned long v, const char* tag) { return sink += v + tag[0]; }

static const char* const kWords[] = {"one", "two", "three"};

// The benchmark's function (tests/selftests/bench/probe_cost.tc), called
// only by `selftest loop`: as small as a call gets.
PROBED long st_bench(long a, long b) {
  __asm__ volatile("" ::: "memory");  // keep the call and its arguments
  return a ^ b;
}

static double thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

// `selftest loop N BURST`: st_bench N times, in bursts of BURST calls with
// 2 ms pauses between (so that a tracer's reader keeps up), then the CPU
// time per call in ns on the last line.
static int bench_loop(long calls, long burst) {
  const struct timespec pause = {0, 2000000};
  long sum = 0;
  const double start = thread_cpu_ns();
  for (long i = 0; i < calls; ++i) {
    sum += st_bench(i, 7);
    if (burst > 0 && (i + 1) % burst == 0) nanosleep(&pause, NULL);
  }
  const double per_call = (thread_cpu_ns() - start) / (double)calls;
  printf("sum %ld\n%.2f\n", sum, per_call);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "loop") == 0) {
    return bench_loop(atol(argv[2]), argc > 3 ? atol(argv[3]) : 0);
  }
  long sum = 0;
  for (long a = 1; a <= 5; ++a) sum += st_step(a, 10);

  const struct sample s = {
      .u8 = 200,
      .s8 = -5,
      .u16 = 60000,
      .u32 = 4000000000u,
      .u64 = 18000000000000000000u,
      .s16 = -30000,
      .ch = 'Q',
      .s32 = -2000000000,
      .s64 = -9000000000000000000,
      .bits = 5u | (19u << 3) | (2748u << 8),
      .arr = {1, 2, 3, 0xbeef},
      .name = "sample-name",
      .fn = st_callback,
      .words = kWords,
  };
  for (int i = 0; i < 2; ++i) sum += st_sample(&s);

  sum += st_string("alpha", 'a');
  sum += st_string("beta", 'b');
  sum += st_string("gamma", 'g');
  for (long x = 0; x < 4; ++x) sum += st_twice(x);
  sum += st_depth(4);
  st_callback();
  for (unsigned long v = 1; v <= 200; ++v) {
    for (unsigned long i = 0; i < v % 5 + 1; ++i) hist_value(v, v % 2 == 0 ? "even" : "odd");
  }

  printf("selftest: ok %ld\n", sum);
  return argc > 1 ? atoi(argv[1]) : 0;
}
