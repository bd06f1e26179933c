// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The floor of any breakpoint probe built on signals: an int3 trapping into
// an empty SIGTRAP handler and returning, N times; prints ns per round trip.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void on_trap(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  (void)context;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 200000;
  struct sigaction action = {0};
  action.sa_sigaction = on_trap;
  action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigaction(SIGTRAP, &action, NULL);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 0; i < n; ++i) __asm__ volatile("int3");
  clock_gettime(CLOCK_MONOTONIC, &end);
  const double ns = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);
  printf("%.1f\n", ns / (double)n);
  return 0;
}
