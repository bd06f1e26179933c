// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A program that clears its environment and then reads the one the kernel
// shows for it (tests/integration/descriptors_test.cc): clearenv() leaves
// the original block of strings alone, and /proc/self/environ shows that
// block. Prints "fd_environ: entry NAME=VALUE" for each entry it finds
// there that starts with DPROBE_ or LD_PRELOAD=, "fd_environ: mark kept"
// when FD_ENVIRON_MARK=kept (set by the test) is still there, and
// "fd_environ: done N" (N entries read). fd_probe() is called once, for a
// probe to hit.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline, used)) int fd_probe(int i) { return i + 1; }

int main(void) {
  fd_probe(1);
  clearenv();
  static char block[1 << 16];
  const int fd = open("/proc/self/environ", O_RDONLY);
  size_t size = 0;
  for (ssize_t n; fd >= 0 && (n = read(fd, block + size, sizeof(block) - 1 - size)) > 0;) {
    size += (size_t)n;
  }
  if (fd >= 0) close(fd);
  int entries = 0;
  for (size_t at = 0; at < size; at += strlen(block + at) + 1) {
    const char* entry = block + at;
    if (*entry == '\0') continue;
    ++entries;
    if (strncmp(entry, "DPROBE_", 7) == 0 || strncmp(entry, "LD_PRELOAD=", 11) == 0) {
      printf("fd_environ: entry %s\n", entry);
    }
    if (strcmp(entry, "FD_ENVIRON_MARK=kept") == 0) printf("fd_environ: mark kept\n");
  }
  printf("fd_environ: done %d\n", entries);
  return fd_probe(2) == 3 ? 0 : 1;
}
