// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Calls bench_leaf(size, name) N times, each call at the bottom of a chain
// of CHAIN distinct noinline functions (chain_0 calls chain_1 ... calls
// bench_leaf), and prints the nanoseconds of CPU time per call, for
// bench/analysis_cost.sh to compare the plain recorded hit with filtered,
// hist-aggregated and stack-traced hits on the same function. Built without
// frame pointers: the stack is unwound through .eh_frame, as in most
// distributions' code. The sizes spread over 2^0..2^19 (20 log2 buckets)
// and the names cycle through 8 strings, so that hist tables hold a few
// entries each, as a real histogram does.
// With BURST, the calls come in bursts of that many with a pause of 2 ms
// between: the tracer's reader keeps up, so every recorded hit writes its
// record instead of counting a loss. Only the bursts are timed (the CPU
// time of the pauses' own system calls is left out). WARMUP calls come
// first, untimed: the tracer's first pass over its ring (a page fault per
// page) and its first unwind of each frame are not what a hit costs.
//   analysis_loop [N] [BURST] [CHAIN] [WARMUP]   (CHAIN: 0 to 16, default 9;
//                                                 WARMUP: default 0)
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char* const kNames[8] = {"alpha", "bravo",  "charlie", "delta",
                                      "echo",  "foxtrot", "golf",   "hotel"};

__attribute__((noinline)) long bench_leaf(long size, const char* name) {
  __asm__ volatile("" ::: "memory");  // keep the call and its arguments
  return size + name[0];
}

// chain_K calls chain_{K+1} while `left` > 0, else bench_leaf: a real call
// in every frame (the addition after it keeps it from being a tail call),
// and each frame's own code, so each has its own return address and rules.
typedef long (*Link)(long, const char*, int);
static Link chain_at(int k);

#define CHAIN_LINK(K)                                                         \
  __attribute__((noinline)) long chain_##K(long size, const char* name, int left) { \
    __asm__ volatile("" ::: "memory");                                        \
    long r = left > 0 ? chain_at(K + 1)(size, name, left - 1) : bench_leaf(size, name); \
    __asm__ volatile("" : "+r"(r)::"memory");                                 \
    return r + K;                                                             \
  }
CHAIN_LINK(0)
CHAIN_LINK(1)
CHAIN_LINK(2)
CHAIN_LINK(3)
CHAIN_LINK(4)
CHAIN_LINK(5)
CHAIN_LINK(6)
CHAIN_LINK(7)
CHAIN_LINK(8)
CHAIN_LINK(9)
CHAIN_LINK(10)
CHAIN_LINK(11)
CHAIN_LINK(12)
CHAIN_LINK(13)
CHAIN_LINK(14)
CHAIN_LINK(15)
CHAIN_LINK(16)

static Link const kChain[17] = {chain_0,  chain_1,  chain_2,  chain_3,  chain_4,  chain_5,
                                chain_6,  chain_7,  chain_8,  chain_9,  chain_10, chain_11,
                                chain_12, chain_13, chain_14, chain_15, chain_16};
static Link chain_at(int k) { return kChain[k]; }

static double thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  const long calls = argc > 1 ? atol(argv[1]) : 1000000;
  const long burst = argc > 2 ? atol(argv[2]) : 0;
  const int chain = argc > 3 ? atoi(argv[3]) : 9;
  const long warmup = argc > 4 ? atol(argv[4]) : 0;
  if (calls <= 0 || burst < 0 || chain < 0 || chain > 16 || warmup < 0) return 2;
  const struct timespec pause = {0, 2000000};
  long sum = 0;
  double spent = 0;  // the bursts' CPU time, not the pauses' system calls
  double start = thread_cpu_ns();
  for (long i = -warmup; i < calls; ++i) {
    if (i == 0) {  // the timed calls start
      spent = 0;
      start = thread_cpu_ns();
    }
    // chain_0 with left = chain - 1 makes `chain` frames between main and
    // bench_leaf; chain 0 calls bench_leaf from main.
    const long size = (long)(((unsigned long)i * 2654435761u) >> 12 & 0xfffff);
    const char* name = kNames[i & 7];
    sum += chain > 0 ? chain_0(size, name, chain - 1) : bench_leaf(size, name);
    if (burst > 0 && (i + warmup + 1) % burst == 0) {
      spent += thread_cpu_ns() - start;
      nanosleep(&pause, NULL);
      start = thread_cpu_ns();
    }
  }
  spent += thread_cpu_ns() - start;
  const double per_call = spent / (double)calls;
  if (sum == 42) return 1;  // use sum so the loop stays
  printf("%.1f\n", per_call);
  return 0;
}
