// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Return-probed functions left and resumed through swapcontext(3), as
// coroutine libraries do, for tests/integration/return_coroutines_test.cc.
// A coroutine with a stack of its own calls c_probed(7), which switches
// back to main from inside itself; main goes on with probed calls of its
// own, then resumes the coroutine from inside two nested probed calls
// (m_outer(3) -> m_switch(3)); c_probed(7) then returns 14 to the
// coroutine, which records it and switches back, and main's calls return.
// In order:
//   m_switch(1)  switches to the coroutine; returns 5 once back
//     c_probed(7)  (coroutine) switches back to main from inside
//   m_probed(2)  returns 6
//   m_outer(3) -> m_switch(3)  switches to the coroutine, where
//     c_probed(7) returns 14, and the coroutine switches back;
//   m_switch(3) returns 15, m_outer(3) 16.
// Prints "coroutine: c_probed=14" from the coroutine, "coroutines: ok"
// last and exits 0 when every value is right; "FAIL what" on stderr and
// exit 1 otherwise.
#define _GNU_SOURCE
#include <stdio.h>
#include <ucontext.h>

#define PROBED __attribute__((noinline, used))

static ucontext_t main_context, coroutine_context;
static volatile long sink;
static volatile long coroutine_result;
static int failures;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAIL %s\n", what);
    ++failures;
  }
}

PROBED long c_probed(long x) {
  sink += x;
  swapcontext(&coroutine_context, &main_context);
  return x * 2;
}

PROBED long m_probed(long x) {
  sink += x;
  return x * 3;
}

PROBED long m_switch(long x) {
  sink += x;
  swapcontext(&main_context, &coroutine_context);
  return x * 5;
}

PROBED long m_outer(long x) { return m_switch(x) + 1; }

static void coroutine(void) {
  coroutine_result = c_probed(7);
  printf("coroutine: c_probed=%ld\n", (long)coroutine_result);
  swapcontext(&coroutine_context, &main_context);
}

int main(void) {
  static char stack[1 << 16];
  getcontext(&coroutine_context);
  coroutine_context.uc_stack.ss_sp = stack;
  coroutine_context.uc_stack.ss_size = sizeof(stack);
  coroutine_context.uc_link = &main_context;
  makecontext(&coroutine_context, coroutine, 0);
  check(m_switch(1) == 5, "m_switch(1)");
  check(m_probed(2) == 6, "m_probed(2)");
  check(m_outer(3) == 16, "m_outer(3)");
  check(coroutine_result == 14, "c_probed(7) returned to the coroutine");
  if (failures != 0) return 1;
  printf("coroutines: ok\n");
  return 0;
}
