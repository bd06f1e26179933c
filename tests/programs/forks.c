// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Children and new programs, for tests/integration/fork_exec_test.cc.
// work(who) is the probed function: 1 is the parent before it forks (or
// the program before it execs), 2 the child, 3 the parent after the child
// ended.
//   forks fork                  work(1), fork: the child calls work(2) and
//                               exits 0; the parent waits, calls work(3)
//   forks forkexec PROG ARG...  work(1), fork: the child execs PROG ARG...
//                               ($PATH searched); the parent waits, work(3)
//   forks exec PROG ARG...      work(1), then execs PROG ARG... itself
//   forks dlchild DIR CYCLES    fork: the child, CYCLES times, dlopens
//                               DIR/libdprobe_test_plugin.so, calls
//                               plugin_func(10) and work(2), dlcloses it;
//                               meanwhile the parent calls work(1) until
//                               the child has ended (at least 1000 times)
//   forks exitinside            inside_fork() forks: the child leaves
//                               through exit() (the agent's destructor runs
//                               there) while the parent is inside the call;
//                               the parent returns 0 from it once the child
//                               ended
// Prints "forks: parent PID child PID" (fork modes, after the child ended;
// dlchild adds "calls N", the parent's calls of work), or "forks: exec PID"
// before the exec. Exits 0 when the child exited 0; 1 otherwise.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline, used)) int work(int who) {
  static volatile int sink;
  sink += who;
  return sink;
}

static int child_status(pid_t child) {
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  fprintf(stderr, "forks: child %d killed by signal %d\n", (int)child,
          WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return 1;
}

static int plugin_cycles(const char* dir, long cycles) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/libdprobe_test_plugin.so", dir);
  for (long i = 0; i < cycles; ++i) {
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) return 1;
    long (*plugin_func)(long) = (long (*)(long))dlsym(handle, "plugin_func");
    if (plugin_func == NULL || plugin_func(10) != 10) return 1;
    work(2);
    if (dlclose(handle) != 0) return 1;
  }
  return 0;
}

static int fork_mode(char** exec_argv) {
  work(1);
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    if (exec_argv != NULL) {
      execvp(exec_argv[0], exec_argv);
      _exit(127);
    }
    work(2);
    _exit(0);
  }
  const int status = child_status(child);
  work(3);
  printf("forks: parent %d child %d\n", (int)getpid(), (int)child);
  return status == 0 ? 0 : 1;
}

__attribute__((noinline, used)) int inside_fork(void) {
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) exit(0);
  const int status = child_status(child);
  printf("forks: parent %d child %d\n", (int)getpid(), (int)child);
  return status;
}

static int dlchild_mode(const char* dir, long cycles) {
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) _exit(plugin_cycles(dir, cycles));
  long calls = 0;
  int status = 0;
  pid_t done = 0;
  while (done == 0 || calls < 1000) {
    work(1);
    ++calls;
    if (done == 0) done = waitpid(child, &status, WNOHANG);
    if (done < 0) return 1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "forks: child failed (status 0x%x)\n", status);
    return 1;
  }
  printf("forks: parent %d child %d calls %ld\n", (int)getpid(), (int)child, calls);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  if (strcmp(argv[1], "fork") == 0) return fork_mode(NULL);
  if (strcmp(argv[1], "forkexec") == 0 && argc > 2) return fork_mode(argv + 2);
  if (strcmp(argv[1], "exec") == 0 && argc > 2) {
    printf("forks: exec %d\n", (int)getpid());
    fflush(stdout);
    work(1);
    execvp(argv[2], argv + 2);
    return 127;
  }
  if (strcmp(argv[1], "exitinside") == 0) return inside_fork();
  if (strcmp(argv[1], "dlchild") == 0 && argc > 3) {
    return dlchild_mode(argv[2], strtol(argv[3], NULL, 10));
  }
  return 2;
}
