// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Processes that make system calls, for tests/integration/syscall_processes_test.cc.
// getppid is the marker: each process makes a known number of them, so a
// trace of sys_enter_getppid counts them per pid.
//   syscall_procs marks N       N getppid calls; prints "syscall_procs: marks PID N"
//   syscall_procs fork          1 getppid, fork: the child makes 2 and exits 0;
//                               the parent waits, then makes 3
//   syscall_procs forkexec N    as fork, but the child execs "syscall_procs marks N"
//   syscall_procs spawn N       1 getppid, posix_spawn of "syscall_procs marks N",
//                               wait, 3 getppid
//   syscall_procs vfork N       as spawn, through vfork and execv
//   syscall_procs exec N        1 getppid, then execs "syscall_procs marks N" itself
// The modes with a child print "syscall_procs: parent PID child PID" once it
// ended; exec prints "syscall_procs: exec PID" before it. Exits 0 when every
// child exited 0; 1 otherwise.
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static const char* self_path;

static void marks(long n) {
  for (long i = 0; i < n; ++i) syscall(SYS_getppid);
}

static int child_status(pid_t child) {
  int status = 0;
  if (child <= 0 || waitpid(child, &status, 0) != child) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int parent_ends(pid_t child) {
  const int status = child_status(child);
  marks(3);
  printf("syscall_procs: parent %d child %d\n", (int)getpid(), (int)child);
  return status == 0 ? 0 : 1;
}

static int fork_mode(const char* exec_marks) {
  marks(1);
  fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    if (exec_marks != NULL) {
      execl(self_path, self_path, "marks", exec_marks, (char*)NULL);
      _exit(127);
    }
    marks(2);
    _exit(0);
  }
  return parent_ends(child);
}

static int spawn_mode(const char* n) {
  marks(1);
  fflush(stdout);
  char* argv[] = {(char*)self_path, "marks", (char*)n, NULL};
  pid_t child = 0;
  if (posix_spawn(&child, self_path, NULL, NULL, argv, environ) != 0) return 1;
  return parent_ends(child);
}

static int vfork_mode(const char* n) {
  marks(1);
  fflush(stdout);
  char* argv[] = {(char*)self_path, "marks", (char*)n, NULL};
  const pid_t child = vfork();
  if (child == 0) {
    execv(self_path, argv);
    _exit(127);
  }
  return parent_ends(child);
}

static int exec_mode(const char* n) {
  marks(1);
  printf("syscall_procs: exec %d\n", (int)getpid());
  fflush(stdout);
  execl(self_path, self_path, "marks", n, (char*)NULL);
  return 1;
}

int main(int argc, char** argv) {
  self_path = argv[0];
  const char* mode = argc > 1 ? argv[1] : "";
  const char* n = argc > 2 ? argv[2] : "1";
  if (strcmp(mode, "marks") == 0) {
    marks(atol(n));
    printf("syscall_procs: marks %d %ld\n", (int)getpid(), atol(n));
    return 0;
  }
  if (strcmp(mode, "fork") == 0) return fork_mode(NULL);
  if (strcmp(mode, "forkexec") == 0) return fork_mode(n);
  if (strcmp(mode, "spawn") == 0) return spawn_mode(n);
  if (strcmp(mode, "vfork") == 0) return vfork_mode(n);
  if (strcmp(mode, "exec") == 0) return exec_mode(n);
  fprintf(stderr, "usage: syscall_procs marks|fork|forkexec|spawn|vfork|exec [N]\n");
  return 2;
}
