// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A program with signal handlers of its own, for
// tests/integration/signals_test.cc. `signals MODE`:
//   trap-sigaction  installs a SIGTRAP handler with sigaction() after start,
//                   then raises SIGTRAP and runs an int3 of its own: the
//                   handler must see both (SI_TKILL, then SI_KERNEL)
//   trap-signal     the same with signal()
//   segv            a SIGSEGV handler of its own: writes to a PROT_NONE page
//                   through f_store and siglongjmps out, 3 times; the
//                   handler checks the fault's address and that the pc is
//                   f_store's store instruction
//   blocked         blocks every signal, then calls the probed functions
//   fork            a child calls probed() 5 times and exits 0
// Every mode calls probed(i) for i = 0..11 (12 calls) and peek(p) 6 times,
// with p a bad pointer or the PROT_NONE page (a probe fetching through p
// faults). Prints "signals: ok" and exits 0 when every check holds; prints
// "FAIL what" on stderr and exits 1 otherwise.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define PROBED __attribute__((noinline, used))

// f_store(p, v): *p = v, as one instruction at f_store+0.
__asm__(".text\n.globl f_store\n.type f_store,@function\nf_store:\n"
        "mov %rsi,(%rdi)\nret\n.size f_store, .-f_store\n");
void f_store(volatile long* p, long v);

static volatile long sink;
static int failures;
static int next_call;

PROBED long probed(long i) { return sink += i; }
PROBED long peek(const void* p) { return sink += p != NULL; }

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAIL %s\n", what);
    ++failures;
  }
}

// Three calls of probed(), in order over the whole run.
static void three_calls(void) {
  for (int i = 0; i < 3; ++i) probed(next_call++);
}

// ---- SIGTRAP ----------------------------------------------------------------

static volatile int traps;
static volatile int trap_codes[4];

static void on_trap_info(int sig, siginfo_t* info, void* context) {
  (void)context;
  if (sig == SIGTRAP && traps < 4) trap_codes[traps] = info->si_code;
  ++traps;
}

static void on_trap(int sig) {
  if (sig == SIGTRAP) ++traps;
}

static void trap_mode(int use_sigaction, void* page) {
  struct sigaction old;
  memset(&old, 0, sizeof(old));
  check(sigaction(SIGTRAP, NULL, &old) == 0, "sigaction query");
  check(old.sa_handler == SIG_DFL, "SIGTRAP starts at SIG_DFL");
  three_calls();
  peek((const void*)1);
  peek(page);
  if (use_sigaction) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_trap_info;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    check(sigaction(SIGTRAP, &sa, NULL) == 0, "sigaction install");
  } else {
    check(signal(SIGTRAP, on_trap) == SIG_DFL, "signal returns SIG_DFL");
  }
  three_calls();
  peek((const void*)1);
  peek(page);
  raise(SIGTRAP);
  check(traps == 1, "the handler saw raise(SIGTRAP)");
  three_calls();
  __asm__ volatile("int3");
  check(traps == 2, "the handler saw the program's own int3");
  if (use_sigaction) {
    check(trap_codes[0] == SI_TKILL, "raise gives SI_TKILL");
    check(trap_codes[1] == SI_KERNEL, "int3 gives SI_KERNEL");
    struct sigaction now;
    check(sigaction(SIGTRAP, NULL, &now) == 0 && now.sa_sigaction == on_trap_info,
          "sigaction reads back the program's handler");
  }
  three_calls();
  peek((const void*)1);
  peek(page);
}

// ---- SIGSEGV ----------------------------------------------------------------

static sigjmp_buf recover;
static volatile int segvs;
static void* volatile fault_address;
static volatile uintptr_t fault_pc;

static void on_segv(int sig, siginfo_t* info, void* context) {
  (void)sig;
  ++segvs;
  fault_address = info->si_addr;
  fault_pc = (uintptr_t)((ucontext_t*)context)->uc_mcontext.gregs[REG_RIP];
  siglongjmp(recover, 1);
}

static void segv_mode(void* page) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  check(sigaction(SIGSEGV, &sa, NULL) == 0, "sigaction SIGSEGV");
  for (int round = 0; round < 3; ++round) {
    three_calls();
    peek((const void*)1);
    peek(page);
    fault_address = NULL;
    fault_pc = 0;
    if (sigsetjmp(recover, 1) == 0) {
      f_store((volatile long*)page, 1);
      check(0, "the store to a PROT_NONE page went through");
    }
    check(segvs == round + 1, "the handler saw the fault");
    check(fault_address == page, "si_addr is the page");
    check(fault_pc == (uintptr_t)f_store, "the faulting pc is f_store's store");
  }
  three_calls();
}

// ---- Blocked signals, fork ----------------------------------------------------

static void blocked_mode(void* page) {
  sigset_t all;
  sigfillset(&all);
  check(sigprocmask(SIG_BLOCK, &all, NULL) == 0, "sigprocmask");
  for (int i = 0; i < 4; ++i) three_calls();
  for (int i = 0; i < 3; ++i) {
    peek((const void*)1);
    peek(page);
  }
}

static void fork_mode(void* page) {
  three_calls();
  const pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 5; ++i) probed(100 + i);
    peek(page);
    _exit(0);
  }
  int status = 0;
  check(child > 0 && waitpid(child, &status, 0) == child, "fork and wait");
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child exits 0");
  for (int i = 0; i < 3; ++i) three_calls();
  for (int i = 0; i < 3; ++i) {
    peek((const void*)1);
    peek(page);
  }
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return 2;
  const char* mode = argv[1];
  if (strcmp(mode, "trap-sigaction") == 0) {
    trap_mode(1, page);
  } else if (strcmp(mode, "trap-signal") == 0) {
    trap_mode(0, page);
  } else if (strcmp(mode, "segv") == 0) {
    segv_mode(page);
  } else if (strcmp(mode, "blocked") == 0) {
    blocked_mode(page);
  } else if (strcmp(mode, "fork") == 0) {
    fork_mode(page);
  } else {
    return 2;
  }
  check(next_call == 12, "probed() was called 12 times");
  if (failures != 0) return 1;
  printf("signals: ok\n");
  return 0;
}
