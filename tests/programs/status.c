// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Ends in a chosen way, after one call of the probed function marker():
//   status exit N     exit(N), after printing "status: exit N"
//   status abort      abort()                      (SIGABRT)
//   status segv       a write through NULL          (SIGSEGV, no handler)
//   status trap       raise(SIGTRAP)               (no handler)
//   status int3       an int3 instruction          (SIGTRAP, no handler)
//   status kill SIG   kill(getpid(), SIG)
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline, used)) int marker(int code) {
  static volatile int seen;
  seen += code;
  return seen;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* mode = argv[1];
  const int arg = argc > 2 ? atoi(argv[2]) : 0;
  marker(arg);
  if (strcmp(mode, "exit") == 0) {
    printf("status: exit %d\n", arg);
    exit(arg);
  }
  fflush(stdout);
  if (strcmp(mode, "abort") == 0) abort();
  if (strcmp(mode, "segv") == 0) *(volatile int*)NULL = 1;
  if (strcmp(mode, "trap") == 0) raise(SIGTRAP);
  if (strcmp(mode, "int3") == 0) __asm__ volatile("int3");
  if (strcmp(mode, "kill") == 0) kill(getpid(), arg);
  return 2;  // not reached in a known mode
}
