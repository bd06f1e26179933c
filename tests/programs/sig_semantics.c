// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// One signal disposition or flag per mode, for
// tests/integration/signal_semantics_test.cc, which runs every mode
// untraced and under dprobe and wants the same output, exit status and
// death signal. `sig_semantics MODE`:
//   ign-kill-segv     SIGSEGV ignored, sent twice with kill(): survives
//   ign-raise-trap    SIGTRAP ignored, raised twice: survives
//   dfl-raise-segv    SIGSEGV at SIG_DFL raised: dies by SIGSEGV
//   dfl-raise-bus     the same with SIGBUS
//   dfl-raise-trap    the same with SIGTRAP
//   dfl-kill-segv     SIGSEGV at SIG_DFL sent to the process with kill()
//   ign-fault         SIGSEGV ignored, a NULL store: dies by SIGSEGV
//   blocked-fault     a handler, SIGSEGV blocked, a NULL store: dies by SIGSEGV
//   resethand         an SA_RESETHAND handler takes the first NULL store (and
//                     siglongjmps out), sigaction reads SIG_DFL back, the
//                     second store kills
//   sa-mask           a handler with sa_mask {SIGUSR1}: inside it SIGUSR1 and
//                     SIGSEGV read as blocked (sigprocmask), after it neither
//   nodefer           an SA_NODEFER handler raises its signal again: the
//                     second runs nested in the first
//   defer             the same without SA_NODEFER: the second waits until the
//                     first returns
//   onstack           an SA_ONSTACK handler on a sigaltstack catches the
//                     overflow of an endless recursion, on the alternate stack
//   thread-onstack    the same on a thread that sets its own sigaltstack
//   siginfo           an SA_SIGINFO handler sees si_code of raise(), of a NULL
//                     store (SEGV_MAPERR) and of kill()
//   restart           a thread blocked in read() on a pipe takes a SIGSEGV
//                     sent by another thread; the handler has SA_RESTART: the
//                     read goes on and returns the byte written later
//   norestart         the same without SA_RESTART: the read fails with EINTR
//   pthread-kill      pthread_kill() sends SIGSEGV to another thread, whose
//                     handler runs
//   wait-trap         SIGTRAP blocked with sigprocmask, raised, seen in
//                     sigpending, taken with sigtimedwait
//   unblock-delivers  SIGSEGV (with a handler) blocked, raised: pending; the
//                     handler runs when sigprocmask unblocks it
//   sigwait-segv      SIGSEGV blocked, sent with kill(), taken with sigwait
//   raw-sigaction-trap  a SIGTRAP handler installed with the raw rt_sigaction
//                     system call (as Go does) sees the program's own int3
//                     and raise(), nothing else
// Every handler calls probed(), which the integration test may probe (a
// probe hit inside a handler) with a fetch through a bad pointer (a fault
// inside a handler). Output is written with write(2), unbuffered, so that
// what was printed before a death is the same in every run. Exit status 0
// when the mode ran to its end; "FAIL what" and exit 1 on a failed check.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROBED __attribute__((noinline, used))

static volatile long sink;
static int failures;

// The test probes it with a fetch through `p` (a bad pointer): a probe hit,
// and a faulting read, wherever it is called from.
PROBED long probed(const void* p, long i) {
  sink += i + (p != NULL);
  return sink;
}

static void say(const char* format, ...) {
  char line[256];
  va_list ap;
  va_start(ap, format);
  const int n = vsnprintf(line, sizeof(line), format, ap);
  va_end(ap);
  if (n > 0) (void)!write(STDOUT_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line));
}

static void check(int ok, const char* what) {
  if (!ok) {
    say("FAIL %s\n", what);
    ++failures;
  }
}

static void install(int sig, void (*handler)(int, siginfo_t*, void*), int flags,
                    const int* masked) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = handler;
  action.sa_flags = SA_SIGINFO | flags;
  sigemptyset(&action.sa_mask);
  for (; masked != NULL && *masked != 0; ++masked) sigaddset(&action.sa_mask, *masked);
  check(sigaction(sig, &action, NULL) == 0, "sigaction");
}

static void set_disposition(int sig, void (*handler)(int)) {
  check(signal(sig, handler) != SIG_ERR, "signal");
}

static int is_blocked(int sig) {
  sigset_t now;
  sigemptyset(&now);
  check(sigprocmask(SIG_SETMASK, NULL, &now) == 0, "sigprocmask query");
  return sigismember(&now, sig);
}

// A store through NULL, which the compiler cannot see coming.
static volatile uintptr_t null_address;
static void null_store(void) { *(volatile int*)null_address = 1; }

// ---- Ignored and default actions ------------------------------------------------

static void ign_kill_segv(void) {
  set_disposition(SIGSEGV, SIG_IGN);
  for (int i = 0; i < 2; ++i) {
    check(kill(getpid(), SIGSEGV) == 0, "kill");
    probed((const void*)1, i);
    say("survived kill %d\n", i);
  }
  struct sigaction now;
  check(sigaction(SIGSEGV, NULL, &now) == 0 && now.sa_handler == SIG_IGN, "still SIG_IGN");
}

static void ign_raise_trap(void) {
  set_disposition(SIGTRAP, SIG_IGN);
  for (int i = 0; i < 2; ++i) {
    raise(SIGTRAP);
    probed((const void*)1, i);
    say("survived raise %d\n", i);
  }
}

static void dfl_raise(int sig) {
  say("raising %d\n", sig);
  raise(sig);
  say("survived the default action\n");
}

static void dfl_kill_segv(void) {
  say("killing\n");
  kill(getpid(), SIGSEGV);
  probed((const void*)1, 0);
  say("survived the default action\n");
}

static void ign_fault(void) {
  set_disposition(SIGSEGV, SIG_IGN);
  say("storing\n");
  null_store();
  say("survived the fault\n");
}

static void on_unexpected(int sig, siginfo_t* info, void* context) {
  (void)info;
  (void)context;
  say("handler ran for %d\n", sig);
  _exit(3);
}

static void blocked_fault(void) {
  install(SIGSEGV, on_unexpected, 0, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSEGV);
  check(sigprocmask(SIG_BLOCK, &set, NULL) == 0, "block");
  say("storing\n");
  null_store();
  say("survived the fault\n");
}

// ---- SA_RESETHAND, sa_mask, SA_NODEFER ------------------------------------------

static sigjmp_buf recover;
static volatile int handled;

static void on_fault_jump(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)context;
  probed((const void*)1, 10);
  ++handled;
  say("handler %d: code %d\n", handled, info->si_code);
  siglongjmp(recover, 1);
}

static void resethand(void) {
  install(SIGSEGV, on_fault_jump, SA_RESETHAND, NULL);
  for (int round = 0; round < 2; ++round) {
    if (sigsetjmp(recover, 1) == 0) {
      say("storing %d\n", round);
      null_store();
      say("survived the store\n");
    }
    struct sigaction now;
    check(sigaction(SIGSEGV, NULL, &now) == 0, "sigaction query");
    say("after %d: handler is %s\n", round,
        now.sa_handler == SIG_DFL ? "SIG_DFL" : "the program's");
  }
}

static void on_segv_masks(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  (void)context;
  probed((const void*)1, 20);
  say("in handler: usr1 %d segv %d usr2 %d\n", is_blocked(SIGUSR1), is_blocked(SIGSEGV),
      is_blocked(SIGUSR2));
}

static void sa_mask(void) {
  const int masked[] = {SIGUSR1, 0};
  install(SIGSEGV, on_segv_masks, 0, masked);
  raise(SIGSEGV);
  say("after: usr1 %d segv %d\n", is_blocked(SIGUSR1), is_blocked(SIGSEGV));
}

static volatile int depth;

static void on_segv_nested(int sig, siginfo_t* info, void* context) {
  (void)info;
  (void)context;
  const int me = ++handled;
  ++depth;
  say("enter %d (depth %d, segv blocked %d)\n", me, depth, is_blocked(SIGSEGV));
  probed((const void*)1, 30 + me);
  if (me == 1) raise(sig);
  say("leave %d\n", me);
  --depth;
}

static void nested(int flags) {
  install(SIGSEGV, on_segv_nested, flags, NULL);
  raise(SIGSEGV);
  say("handled %d\n", handled);
}

// ---- SA_ONSTACK ------------------------------------------------------------------

static char* alt_low;
static char* alt_high;

static void on_overflow(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  (void)context;
  char here;
  probed((const void*)1, 40);
  const int on_alt = &here >= alt_low && &here < alt_high;
  say("overflow caught, on the alternate stack %d\n", on_alt);
  _exit(on_alt ? 0 : 4);
}

static volatile long depth_limit = -1;  // never reached: the stack ends first

PROBED static long recurse(long n) {
  volatile char frame[512];
  frame[0] = (char)n;
  if (n == depth_limit) return 0;
  return recurse(n + 1) + frame[0];
}

static void onstack(void) {
  // Room for the handler's own calls, and for probe hits nested in them.
  const size_t size = 1 << 18;
  alt_low = malloc(size);
  alt_high = alt_low + size;
  stack_t alt = {.ss_sp = alt_low, .ss_size = size, .ss_flags = 0};
  check(sigaltstack(&alt, NULL) == 0, "sigaltstack");
  install(SIGSEGV, on_overflow, SA_ONSTACK, NULL);
  // An unlimited stack would take every page it can before it overflows.
  struct rlimit limit;
  if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur > (8 << 20)) {
    limit.rlim_cur = 8 << 20;
    setrlimit(RLIMIT_STACK, &limit);
  }
  say("recursing\n");
  sink += recurse(0);
  say("the recursion ended\n");
}

// The same on a thread of its own, which sets its own signal stack (as
// Rust's and the JVM's threads do).
static void* overflowing_thread(void* arg) {
  (void)arg;
  const size_t size = 1 << 18;
  alt_low = malloc(size);
  alt_high = alt_low + size;
  stack_t alt = {.ss_sp = alt_low, .ss_size = size, .ss_flags = 0};
  check(sigaltstack(&alt, NULL) == 0, "sigaltstack");
  say("recursing\n");
  sink += recurse(0);
  say("the recursion ended\n");
  return NULL;
}

static void thread_onstack(void) {
  install(SIGSEGV, on_overflow, SA_ONSTACK, NULL);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_t thread;
  check(pthread_create(&thread, &attr, overflowing_thread, NULL) == 0, "pthread_create");
  pthread_join(thread, NULL);
}

// ---- si_code -----------------------------------------------------------------------

static volatile int codes[4];

static void on_segv_code(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)context;
  probed((const void*)1, 50);
  codes[handled++] = info->si_code;
  if (info->si_code > 0) siglongjmp(recover, 1);
}

static void siginfo_mode(void) {
  install(SIGSEGV, on_segv_code, 0, NULL);
  raise(SIGSEGV);
  if (sigsetjmp(recover, 1) == 0) null_store();
  kill(getpid(), SIGSEGV);
  say("codes %d %d %d (SI_TKILL %d, SEGV_MAPERR %d, SI_USER %d)\n", codes[0], codes[1], codes[2],
      SI_TKILL, SEGV_MAPERR, SI_USER);
}

// ---- SA_RESTART --------------------------------------------------------------------

static int pipe_ends[2];
static volatile int reader_ready;

static void on_segv_count(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  (void)context;
  probed((const void*)1, 60);
  ++handled;
}

static volatile pid_t reader_tid;

static void* reader(void* arg) {
  (void)arg;
  char byte = 0;
  reader_tid = gettid();
  reader_ready = 1;
  const ssize_t n = read(pipe_ends[0], &byte, 1);
  const int error = errno;
  say("read %zd %s byte %c, handled %d\n", n, n < 0 && error == EINTR ? "EINTR" : "-",
      n == 1 ? byte : '-', handled);
  return NULL;
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

// The reader is asleep in read() when the kernel says so: the system call
// it is in is read (0 on x86_64), not just that it got near it.
static void wait_until_in_read(pid_t tid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
  for (int tries = 0; tries < 10000; ++tries) {
    char text[32] = {0};
    FILE* file = fopen(path, "r");
    if (file != NULL) {
      (void)!fread(text, 1, sizeof(text) - 1, file);
      fclose(file);
    }
    if (strncmp(text, "0 ", 2) == 0) {
      sleep_ms(20);  // in read(), and asleep in it
      return;
    }
    sleep_ms(1);
  }
  check(0, "the reader never blocked in read()");
}

static void restart(int flags) {
  install(SIGSEGV, on_segv_count, flags, NULL);
  check(pipe(pipe_ends) == 0, "pipe");
  pthread_t thread;
  check(pthread_create(&thread, NULL, reader, NULL) == 0, "pthread_create");
  while (!reader_ready) sleep_ms(1);
  wait_until_in_read(reader_tid);
  // tgkill itself: pthread_kill() is the pthread-kill mode's.
  check(syscall(SYS_tgkill, getpid(), reader_tid, SIGSEGV) == 0, "tgkill");
  sleep_ms(300);
  (void)!write(pipe_ends[1], "x", 1);
  pthread_join(thread, NULL);
}

// glibc's pthread_kill() to another thread runs part of itself with every
// signal blocked (and calls getpid there).
static void* wait_for_signal(void* arg) {
  (void)arg;
  reader_ready = 1;
  while (!handled) sleep_ms(1);
  return NULL;
}

static void pthread_kill_mode(void) {
  install(SIGSEGV, on_segv_count, SA_RESTART, NULL);
  pthread_t thread;
  check(pthread_create(&thread, NULL, wait_for_signal, NULL) == 0, "pthread_create");
  while (!reader_ready) sleep_ms(1);
  check(pthread_kill(thread, SIGSEGV) == 0, "pthread_kill");
  pthread_join(thread, NULL);
  say("handled %d\n", handled);
}

// ---- Blocked signals taken by wait, pending, unblock -----------------------------------

static void wait_trap(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTRAP);
  check(sigprocmask(SIG_BLOCK, &set, NULL) == 0, "block SIGTRAP");
  say("blocked %d\n", is_blocked(SIGTRAP));
  raise(SIGTRAP);
  probed((const void*)1, 70);
  sigset_t pending;
  sigemptyset(&pending);
  check(sigpending(&pending) == 0, "sigpending");
  say("pending %d\n", sigismember(&pending, SIGTRAP));
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  const struct timespec timeout = {2, 0};
  const int sig = sigtimedwait(&set, &info, &timeout);
  say("sigtimedwait %d code %d pid-ok %d\n", sig, info.si_code, info.si_pid == getpid());
  check(sigpending(&pending) == 0, "sigpending");
  say("pending after %d, blocked %d\n", sigismember(&pending, SIGTRAP), is_blocked(SIGTRAP));
}

static void unblock_delivers(void) {
  install(SIGSEGV, on_segv_count, 0, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSEGV);
  check(sigprocmask(SIG_BLOCK, &set, NULL) == 0, "block SIGSEGV");
  raise(SIGSEGV);
  probed((const void*)1, 80);
  sigset_t pending;
  sigemptyset(&pending);
  check(sigpending(&pending) == 0, "sigpending");
  say("raised: handled %d pending %d\n", handled, sigismember(&pending, SIGSEGV));
  sigset_t old;
  sigemptyset(&old);
  check(sigprocmask(SIG_UNBLOCK, &set, &old) == 0, "unblock SIGSEGV");
  say("unblocked: handled %d, was blocked %d\n", handled, sigismember(&old, SIGSEGV));
}

static void sigwait_segv(void) {
  install(SIGSEGV, on_unexpected, 0, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSEGV);
  check(pthread_sigmask(SIG_BLOCK, &set, NULL) == 0, "block SIGSEGV");
  kill(getpid(), SIGSEGV);
  int sig = 0;
  check(sigwait(&set, &sig) == 0, "sigwait");
  say("sigwait %d\n", sig);
}

// ---- SIGTRAP handler through the raw system call (Go, cgo) -------------------------------

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000  // the kernel's flag: the C library's headers keep it to themselves
#endif

struct kernel_sigaction {
  void (*handler)(int, siginfo_t*, void*);
  unsigned long flags;
  void (*restorer)(void);
  uint64_t mask;
};

static volatile int raw_traps;

static void on_raw_trap(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  (void)context;
  ++raw_traps;
}

static void raw_sigaction_trap(void) {
  // The C library's restorer, as the kernel holds it for SIGSEGV's action.
  struct kernel_sigaction current;
  struct sigaction probe_restorer;
  memset(&probe_restorer, 0, sizeof(probe_restorer));
  probe_restorer.sa_handler = SIG_DFL;
  sigaction(SIGUSR2, &probe_restorer, NULL);
  check(syscall(SYS_rt_sigaction, SIGUSR2, NULL, &current, 8) == 0, "rt_sigaction query");
  struct kernel_sigaction action = {on_raw_trap, SA_SIGINFO | SA_RESTORER | SA_RESTART,
                                    current.restorer, 0};
  check(syscall(SYS_rt_sigaction, SIGTRAP, &action, NULL, 8) == 0, "rt_sigaction");
  for (int i = 0; i < 5; ++i) probed((const void*)1, 90 + i);
  __asm__ volatile("int3");
  raise(SIGTRAP);
  for (int i = 0; i < 5; ++i) probed((const void*)1, 95 + i);
  say("raw handler saw %d traps\n", raw_traps);
}

// ---- main ------------------------------------------------------------------------------

struct Mode {
  const char* name;
  void (*run)(void);
};

static void dfl_raise_segv(void) { dfl_raise(SIGSEGV); }
static void dfl_raise_bus(void) { dfl_raise(SIGBUS); }
static void dfl_raise_trap(void) { dfl_raise(SIGTRAP); }
static void nodefer(void) { nested(SA_NODEFER); }
static void defer(void) { nested(0); }
static void restart_mode(void) { restart(SA_RESTART); }
static void norestart_mode(void) { restart(0); }

static const struct Mode kModes[] = {
    {"ign-kill-segv", ign_kill_segv},
    {"ign-raise-trap", ign_raise_trap},
    {"dfl-raise-segv", dfl_raise_segv},
    {"dfl-raise-bus", dfl_raise_bus},
    {"dfl-raise-trap", dfl_raise_trap},
    {"dfl-kill-segv", dfl_kill_segv},
    {"ign-fault", ign_fault},
    {"blocked-fault", blocked_fault},
    {"resethand", resethand},
    {"sa-mask", sa_mask},
    {"nodefer", nodefer},
    {"defer", defer},
    {"onstack", onstack},
    {"thread-onstack", thread_onstack},
    {"siginfo", siginfo_mode},
    {"restart", restart_mode},
    {"norestart", norestart_mode},
    {"pthread-kill", pthread_kill_mode},
    {"wait-trap", wait_trap},
    {"unblock-delivers", unblock_delivers},
    {"sigwait-segv", sigwait_segv},
    {"raw-sigaction-trap", raw_sigaction_trap},
};

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  // Deaths by a core-dumping signal leave no core file behind.
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  for (size_t i = 0; i < sizeof(kModes) / sizeof(kModes[0]); ++i) {
    if (strcmp(argv[1], kModes[i].name) == 0) {
      kModes[i].run();
      say("end of %s\n", argv[1]);
      return failures == 0 ? 0 : 1;
    }
  }
  return 2;
}
