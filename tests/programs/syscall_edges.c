// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// System calls at the edges, for tests/integration/syscall_edges_test.cc:
// a signal in a blocking call, a program's own SIGSYS, no descriptors.
//   syscall_edges eintr           read on an empty pipe; 200 ms later SIGALRM's
//                                 handler (no SA_RESTART) writes "data" to it:
//                                 the read fails with EINTR, a second read gets
//                                 the data. Prints "syscall_edges: read R errno E
//                                 then N 'TEXT'"
//   syscall_edges restart         the same with SA_RESTART: the read itself
//                                 returns the data. Prints the same line
//   syscall_edges seccomp         a SIGSYS handler (sigaction), then a seccomp
//                                 filter that traps getpid (SECCOMP_RET_TRAP):
//                                 the handler answers 4242 for it. Then a
//                                 thread makes getppid calls. Prints
//                                 "syscall_edges: seccomp getpid G code C nr N
//                                 site S errno E thread T traps N" (S: 1 when
//                                 the handler's si_call_addr is the program's
//                                 own call site; N: the handler's calls, 1)
//   syscall_edges seccomp_loop    the same filter and handler, then getpid
//                                 calls from the one site in rounds of 100
//                                 with 1 ms pauses (time for a tracer to
//                                 rewrite it): 10 rounds past the first that
//                                 finds the site rewritten, at most 300.
//                                 Prints "syscall_edges: seccomp loop answered
//                                 A site S traps T" (each 1 when every call
//                                 got 4242, every trap was told the site,
//                                 and there was one trap per call), and on
//                                 stderr "syscall_edges: site rewritten R"
//                                 (R: 1 when the site's first byte is a jmp)
//   syscall_edges handler_in_site a thread faults in the middle of the few
//                                 instructions that end with a getppid
//                                 syscall (fault_site), and its SIGSEGV
//                                 handler waits while another thread makes
//                                 calls from that site (until it finds it
//                                 rewritten, or 3000); then the page is made
//                                 readable, the handler returns there, and
//                                 the call is made. Prints "syscall_edges:
//                                 handler_in_site ppid P" (P: 1 when every
//                                 call got the parent's pid)
//   syscall_edges handler_in_site division
//                                 the same with a division by zero
//                                 (division_site): SIGFPE, whose handler
//                                 the kernel runs without the agent
//   syscall_edges cancel_in_open FIFO
//                                 a thread opens FIFO (made here) for
//                                 reading, which waits for a writer that
//                                 never comes; main cancels it, then calls
//                                 fault_site in rounds until it finds it
//                                 rewritten (or 300 rounds). Prints
//                                 "syscall_edges: cancel_in_open canceled C
//                                 calls ok K" and on stderr "syscall_edges:
//                                 site rewritten R"
//   syscall_edges closeall FILE [range]
//                                 closes 0..1023 (and with "range",
//                                 close_range(0, ~0U) too), opens FILE (fd 0),
//                                 makes 3 getppid calls and writes
//                                 "syscall_edges: closeall fd F ppid P" there
// Exits 0 when every call behaved as it should; 1 otherwise.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

// ---- a signal in a blocking read ---------------------------------------------

static int pipe_fds[2];

static void on_alarm(int sig) {
  (void)sig;
  const int saved = errno;
  if (write(pipe_fds[1], "data", 4) != 4) _exit(3);
  errno = saved;
}

static int interrupted_read(int restart) {
  if (pipe(pipe_fds) != 0) return 1;
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = on_alarm;
  action.sa_flags = restart ? SA_RESTART : 0;
  if (sigaction(SIGALRM, &action, NULL) != 0) return 1;
  // Long enough that the read is waiting when the signal comes.
  const struct itimerval in_200ms = {{0, 0}, {0, 200000}};
  if (setitimer(ITIMER_REAL, &in_200ms, NULL) != 0) return 1;
  char text[16] = {0};
  errno = 0;
  const long first = syscall(SYS_read, pipe_fds[0], text, sizeof(text));
  const int first_errno = first < 0 ? errno : 0;
  const long second = first < 0 ? syscall(SYS_read, pipe_fds[0], text, sizeof(text)) : first;
  printf("syscall_edges: read %ld errno %d then %ld '%.*s'\n", first, first_errno, second,
         second > 0 ? (int)second : 0, text);
  return second == 4 && memcmp(text, "data", 4) == 0 ? 0 : 1;
}

// ---- a program's own SIGSYS ----------------------------------------------------

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1  // si_code of a seccomp filter's SIGSYS (asm-generic/siginfo.h)
#endif

static volatile int sigsys_count;
static volatile int sigsys_code = -1;
static volatile int sigsys_nr = -1;
static void* volatile sigsys_address;

// The getpid the filter traps, made here so that the handler can tell its
// site: seccomp_site_end is the address after the syscall instruction, the
// 7 bytes before it `mov $39, %eax; syscall` (what a tracer may replace).
extern char seccomp_site_end[];
__attribute__((noinline, used)) long trapped_getpid(void) {
  long result;
  __asm__ volatile(
      "mov $39, %%eax\n"  // SYS_getpid
      "syscall\n"
      ".globl seccomp_site_end\n"
      "seccomp_site_end:\n"
      : "=a"(result)
      :
      : "rcx", "r11", "memory");
  return result;
}

static void on_sigsys(int sig, siginfo_t* info, void* context) {
  (void)sig;
  ++sigsys_count;
  sigsys_code = info->si_code;
  sigsys_nr = info->si_syscall;
  sigsys_address = info->si_call_addr;
  ((ucontext_t*)context)->uc_mcontext.gregs[REG_RAX] = 4242;
}

static int trap_getpid(void) {
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof(code) / sizeof(code[0]), code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 1;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0;
}

// on_sigsys as the SIGSYS handler, then the filter that traps getpid.
static int sandbox_with_own_sigsys(void) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = on_sigsys;
  action.sa_flags = SA_SIGINFO;
  return sigaction(SIGSYS, &action, NULL) != 0 || trap_getpid() != 0;
}

static void* sandboxed_thread(void* ppid) {
  for (int i = 0; i < 3; ++i) {
    if (syscall(SYS_getppid) != *(long*)ppid) return NULL;
  }
  return ppid;
}

static int own_sigsys(void) {
  if (sandbox_with_own_sigsys() != 0) return 1;
  errno = 0;
  const long pid = trapped_getpid();
  const int after = errno;
  // The sandboxed program goes on: a thread, its calls, its end.
  long ppid = syscall(SYS_getppid);
  pthread_t thread;
  void* thread_ok = NULL;
  if (pthread_create(&thread, NULL, sandboxed_thread, &ppid) != 0) return 1;
  pthread_join(thread, &thread_ok);
  const int site = sigsys_address == (void*)seccomp_site_end;
  printf("syscall_edges: seccomp getpid %ld code %d nr %d site %d errno %d thread %d traps %d\n",
         pid, sigsys_code, sigsys_nr, site, after, thread_ok != NULL, sigsys_count);
  // The site is printed, not required: the status tells whether the call
  // was trapped and answered.
  return pid == 4242 && sigsys_code == SYS_SECCOMP && sigsys_nr == SYS_getpid && thread_ok != NULL
             ? 0
             : 1;
}

// The site traced all along: each trap, once it is rewritten too, reaches
// the program's handler told its own site, and its answer is the result.
static int own_sigsys_in_a_loop(void) {
  if (sandbox_with_own_sigsys() != 0) return 1;
  int calls = 0;
  int answered = 0;
  int at_site = 0;
  int rounds_left = 300;
  int rewritten = 0;
  while (rounds_left-- > 0) {
    for (int i = 0; i < 100; ++i, ++calls) {
      sigsys_address = NULL;
      answered += trapped_getpid() == 4242;
      at_site += sigsys_address == (void*)seccomp_site_end;
    }
    if (!rewritten && (unsigned char)seccomp_site_end[-7] == 0xe9) {
      rewritten = 1;
      rounds_left = 10;
    }
    usleep(1000);
  }
  printf("syscall_edges: seccomp loop answered %d site %d traps %d\n", answered == calls,
         at_site == calls, sigsys_count == calls);
  fprintf(stderr, "syscall_edges: site rewritten %d\n", rewritten);
  if (sigsys_count != calls)
    fprintf(stderr, "syscall_edges: %d traps, %d calls\n", sigsys_count, calls);
  return answered == calls ? 0 : 1;
}

// ---- a handler returning into a site -------------------------------------------------

// mov $110 (getppid), %eax; nop; movl (%rdi), %ecx; syscall; ret. The
// load sits between the first and the last of the five bytes a tracer
// replaces to rewrite the site: a fault there leaves the thread's place
// inside them, in its signal frame.
__asm__(
    ".text\n"
    ".globl fault_site\n"
    ".type fault_site, @function\n"
    "fault_site:\n"
    "  .cfi_startproc\n"
    "  mov $110, %eax\n"
    "  nop\n"
    "  movl (%rdi), %ecx\n"
    "  syscall\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size fault_site, .-fault_site\n");
long fault_site(const int* readable);

// mov %edi, %ecx; xor %edx, %edx; mov $110, %eax; nop; div %ecx; syscall;
// ret: getppid when called with 1. Called with 0, the division traps
// (SIGFPE, a signal the agent does not hold) between the first and the
// last of the five bytes a tracer replaces; the handler makes the divisor
// 1 and returns there, and the division runs again.
__asm__(
    ".text\n"
    ".globl division_site\n"
    ".type division_site, @function\n"
    "division_site:\n"
    "  .cfi_startproc\n"
    "  mov %edi, %ecx\n"
    "  xor %edx, %edx\n"
    "  mov $110, %eax\n"
    "  nop\n"
    "  div %ecx\n"
    "  syscall\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size division_site, .-division_site\n");
long division_site(unsigned divisor);

static void* unreadable;
static volatile int worker_done;
static int readable_word;

// Which site the two threads call: the faulting read's or the division's.
static int by_division;
static long call_site(void) { return by_division ? division_site(1) : fault_site(&readable_word); }
// Whether the site's first byte (its nop) is now a jmp.
static int site_rewritten(void) {
  const unsigned char* site =
      by_division ? (const unsigned char*)division_site + 9 : (const unsigned char*)fault_site + 5;
  return *site == 0xe9;
}

static void wait_for_worker(int sig) {
  (void)sig;
  static const char line[] = "syscall_edges: in handler\n";
  if (write(2, line, sizeof(line) - 1) < 0) return;
  while (!worker_done) usleep(1000);
  mprotect(unreadable, 4096, PROT_READ);
}

static void wait_then_divide_by_one(int sig, siginfo_t* info, void* context) {
  (void)info;
  wait_for_worker(sig);
  ((ucontext_t*)context)->uc_mcontext.gregs[REG_RCX] = 1;
}

// Calls the site in rounds of 10 with 1 ms pauses: 300 rounds, or 5 past
// the first that finds it rewritten (its nop, fault_site + 5, a jmp).
static void* call_the_site(void* ppid) {
  long calls = 0;
  long good = 0;
  int rounds = 300;
  int rewritten = 0;
  while (rounds-- > 0) {
    for (int i = 0; i < 10; ++i, ++calls) good += call_site() == *(long*)ppid;
    if (!rewritten && site_rewritten()) {
      rewritten = 1;
      rounds = 5;
    }
    usleep(1000);
  }
  worker_done = 1;
  return good == calls ? ppid : NULL;
}

static int handler_in_site(int division) {
  by_division = division;
  unreadable = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (unreadable == MAP_FAILED) return 1;
  struct sigaction action = {.sa_sigaction = wait_then_divide_by_one, .sa_flags = SA_SIGINFO};
  if (division) {
    sigaction(SIGFPE, &action, NULL);
  } else {
    signal(SIGSEGV, wait_for_worker);
  }
  long ppid = getppid();
  pthread_t worker;
  void* worker_ok = NULL;
  if (pthread_create(&worker, NULL, call_the_site, &ppid) != 0) return 1;
  const long mine = division ? division_site(0) : fault_site(unreadable);
  pthread_join(worker, &worker_ok);
  const int ok = mine == ppid && worker_ok != NULL;
  printf("syscall_edges: handler_in_site ppid %d\n", ok);
  return ok ? 0 : 1;
}

// ---- a thread cancelled in an open ---------------------------------------------------

static void* open_fifo(void* path) {
  const int fd = open((const char*)path, O_RDONLY);  // waits: no writer comes
  if (fd >= 0) close(fd);
  return NULL;
}

static int cancel_in_open(const char* fifo) {
  if (mkfifo(fifo, 0600) != 0) return 1;
  pthread_t opener;
  if (pthread_create(&opener, NULL, open_fifo, (void*)fifo) != 0) return 1;
  usleep(100000);  // in its open by now
  pthread_cancel(opener);
  void* result = NULL;
  pthread_join(opener, &result);
  const long ppid = getppid();
  long calls = 0;
  long good = 0;
  int rewritten = 0;
  for (int round = 0; round < 300 && !rewritten; ++round) {
    for (int i = 0; i < 10; ++i, ++calls) good += fault_site(&readable_word) == ppid;
    rewritten = ((const unsigned char*)fault_site)[5] == 0xe9;
    usleep(1000);
  }
  unlink(fifo);
  printf("syscall_edges: cancel_in_open canceled %d calls ok %d\n", result == PTHREAD_CANCELED,
         good == calls);
  fprintf(stderr, "syscall_edges: site rewritten %d\n", rewritten);
  return result == PTHREAD_CANCELED && good == calls ? 0 : 1;
}

// ---- no descriptors ------------------------------------------------------------

static int without_descriptors(const char* path, int range) {
  for (int fd = 0; fd < 1024; ++fd) close(fd);
  if (range && syscall(SYS_close_range, 0, ~0U, 0) != 0) return 1;
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd != 0) return 1;
  long ppid = 0;
  for (int i = 0; i < 3; ++i) ppid = syscall(SYS_getppid);
  char line[128];
  const int length =
      snprintf(line, sizeof(line), "syscall_edges: closeall fd %d ppid %ld\n", fd, ppid);
  return write(fd, line, (size_t)length) == length && close(fd) == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "eintr") == 0) return interrupted_read(0);
  if (strcmp(mode, "restart") == 0) return interrupted_read(1);
  if (strcmp(mode, "seccomp") == 0) return own_sigsys();
  if (strcmp(mode, "seccomp_loop") == 0) return own_sigsys_in_a_loop();
  if (strcmp(mode, "handler_in_site") == 0) {
    return handler_in_site(argc > 2 && strcmp(argv[2], "division") == 0);
  }
  if (strcmp(mode, "cancel_in_open") == 0 && argc > 2) return cancel_in_open(argv[2]);
  if (strcmp(mode, "closeall") == 0 && argc > 2) {
    return without_descriptors(argv[2], argc > 3 && strcmp(argv[3], "range") == 0);
  }
  fprintf(stderr, "usage: syscall_edges eintr | restart | seccomp | closeall FILE [range]\n");
  return 2;
}
