// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Signal handlers and fork inside return-probed functions, for
// tests/integration/return_signals_test.cc:
//   ret_signals MODE
// MODE:
//   nested       probed(i) for i = 0..5; probed(1) and probed(4) raise
//                SIGUSR1 from inside themselves, and the handler (SA_RESTART,
//                on the thread's own stack) calls probed(100 + i) before
//                they return. probed(i) answers i * 2 + 1.
//   altstack     the same with the handler on an alternate signal stack
//                (SA_ONSTACK) mapped below the thread's stack
//   altstack-above  the same, on a thread whose stack lies below the
//                alternate signal stack
//   timer        probed(i) for i = 0 .. 19999 on the main thread while an
//                interval timer's handler (SIGALRM, SA_RESTART) calls
//                probed(1000000 + k) for k = 0, 1, ...; main goes on until
//                the handler has run at least 400 times (at most 5,000,000
//                calls). Prints "timer: main=M handler=H" (the calls made).
//                The program has no other thread: the handler must always
//                run on the main thread.
//   process      main blocks SIGUSR2, sends it to the whole process (kill),
//                waits a second, unblocks it and waits until it was
//                handled: the handler
//                records its thread and calls probed(500). The program has
//                no other thread: the handler must run on the main thread.
//   fork         outer(7) calls forker(7), which forks: the child returns
//                from forker and outer (forker answers 0 there), prints
//                "child: forker=0 outer=1" and exits 42; the parent's
//                forker answers the child's pid, outer answers pid + 1; the
//                parent checks the child's exit status, then calls
//                probed(3). Prints "child pid=PID".
// Prints "signals: ok" and exits 0 when every check holds; "FAIL what" on
// stderr and exit 1 otherwise.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBED __attribute__((noinline, used))

static volatile long sink;
static int failures;
static volatile long raising;  // the i of the probed(i) that raises, or -1
static volatile long handler_calls;
static volatile int handler_failed;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAIL %s\n", what);
    ++failures;
  }
}

PROBED long probed(long i) {
  sink += i;
  if (i == raising) {
    raise(SIGUSR1);
    sink += 1;
  }
  return i * 2 + 1;
}

static void on_usr1(int sig) {
  (void)sig;
  const long i = 100 + raising;
  if (probed(i) != i * 2 + 1) handler_failed = 1;
  ++handler_calls;
}

// The program's only thread in timer mode: a process-directed SIGALRM
// can go nowhere else.
static pid_t main_tid;
static volatile long foreign_handler_calls;

static void on_alarm(int sig) {
  (void)sig;
  if (gettid() != main_tid) ++foreign_handler_calls;
  const long i = 1000000 + handler_calls;
  if (probed(i) != i * 2 + 1) handler_failed = 1;
  ++handler_calls;
}

static volatile pid_t process_signal_tid;

static void on_process_signal(int sig) {
  (void)sig;
  if (probed(500) != 1001) handler_failed = 1;
  process_signal_tid = gettid();
}

static void install(int sig, void (*handler)(int), int flags) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART | flags;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, NULL);
}

static void* nested_calls(void* arg) {
  (void)arg;
  for (long i = 0; i < 6; ++i) {
    raising = (i == 1 || i == 4) ? i : -1;
    check(probed(i) == i * 2 + 1, "probed(i)");
  }
  raising = -1;
  return NULL;
}

static void* stack_of(size_t size) {
  void* map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    fprintf(stderr, "mmap failed\n");
    exit(2);
  }
  return map;
}

static void use_altstack(void* stack, size_t size) {
  stack_t ss;
  memset(&ss, 0, sizeof(ss));
  ss.ss_sp = stack;
  ss.ss_size = size;
  if (sigaltstack(&ss, NULL) != 0) check(0, "sigaltstack");
}

static void* nested_on_altstack(void* arg) {
  use_altstack(arg, 1 << 16);
  return nested_calls(NULL);
}

PROBED long forker(long x) {
  sink += x;
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) check(0, "fork");
  return pid;
}

PROBED long outer(long x) { return forker(x) + 1; }

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "nested";
  raising = -1;
  if (strcmp(mode, "nested") == 0) {
    install(SIGUSR1, on_usr1, 0);
    nested_calls(NULL);
    check(handler_calls == 2, "the handler ran twice");
  } else if (strcmp(mode, "altstack") == 0) {
    install(SIGUSR1, on_usr1, SA_ONSTACK);
    void* altstack = stack_of(1 << 16);
    check((uintptr_t)altstack < (uintptr_t)&altstack, "the alternate stack lies below");
    use_altstack(altstack, 1 << 16);
    nested_calls(NULL);
    check(handler_calls == 2, "the handler ran twice");
  } else if (strcmp(mode, "altstack-above") == 0) {
    install(SIGUSR1, on_usr1, SA_ONSTACK);
    // Mapped first, so that the thread's stack, mapped after, lies below.
    void* altstack = stack_of(1 << 16);
    void* thread_stack = stack_of(1 << 20);
    check((uintptr_t)thread_stack < (uintptr_t)altstack, "the thread's stack lies below");
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, thread_stack, 1 << 20);
    pthread_t thread;
    pthread_create(&thread, &attr, nested_on_altstack, altstack);
    pthread_join(thread, NULL);
    check(handler_calls == 2, "the handler ran twice");
  } else if (strcmp(mode, "timer") == 0) {
    main_tid = gettid();
    install(SIGALRM, on_alarm, 0);
    const struct itimerval every = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &every, NULL);
    long i = 0;
    for (; i < 20000 || (handler_calls < 400 && i < 5000000); ++i) {
      if (probed(i) != i * 2 + 1) check(0, "probed(i)");
    }
    const struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("timer: main=%ld handler=%ld\n", i, (long)handler_calls);
    check(foreign_handler_calls == 0, "SIGALRM handled on a thread the program did not create");
  } else if (strcmp(mode, "process") == 0) {
    install(SIGUSR2, on_process_signal, 0);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    sigprocmask(SIG_BLOCK, &usr2, NULL);
    kill(getpid(), SIGUSR2);
    // Pending for this thread until it unblocks, unless some other thread
    // takes it meanwhile: give any such thread a second to.
    for (long spins = 0; process_signal_tid == 0 && spins < 1000; ++spins) usleep(1000);
    sigprocmask(SIG_UNBLOCK, &usr2, NULL);
    for (long spins = 0; process_signal_tid == 0 && spins < 10000; ++spins) usleep(1000);
    check(process_signal_tid != 0, "SIGUSR2 handled");
    check(process_signal_tid == gettid(), "SIGUSR2 handled on a thread the program did not create");
  } else if (strcmp(mode, "fork") == 0) {
    const long answer = outer(7);
    if (answer == 1) {
      printf("child: forker=0 outer=%ld\n", answer);
      fflush(stdout);
      _exit(42);
    }
    int status = 0;
    check(waitpid((pid_t)(answer - 1), &status, 0) == answer - 1, "waitpid");
    check(WIFEXITED(status) && WEXITSTATUS(status) == 42, "the child exited 42");
    printf("child pid=%ld\n", answer - 1);
    check(probed(3) == 7, "probed(3)");
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  check(!handler_failed, "the handler's probed calls answered right");
  if (failures != 0) return 1;
  printf("signals: ok\n");
  return 0;
}
