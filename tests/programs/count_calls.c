// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A program whose calls are known: the kernel's uprobes count them on an
// untraced run, dprobe's profile must say the same (tests/oracle/
// run_counts.sh). Calls go through pointers the compiler cannot see
// through, so none is inlined or turned into a builtin. With an argument
// "where": prints where this process's strlen, memcpy and strcmp go (the
// IFUNCs' implementations, as the loader chose them), as file offsets of
// the C library, and exits. With "wait FILE": prints "ready", then waits,
// calling nothing counted, until FILE exists, and makes its calls then
// (for counts from an attach on).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kCalls = 1000, kSmall = 10 };

static void* (*volatile malloc_fn)(size_t) = malloc;
static void (*volatile free_fn)(void*) = free;
static void* (*volatile calloc_fn)(size_t, size_t) = calloc;
static void* (*volatile realloc_fn)(void*, size_t) = realloc;
static size_t (*volatile strlen_fn)(const char*) = strlen;
static void* (*volatile memcpy_fn)(void*, const void*, size_t) = memcpy;
static int (*volatile strcmp_fn)(const char*, const char*) = strcmp;

__attribute__((noinline)) int count_calls_work(int i) { return i * 3 + 1; }

// The implementation's address as a file offset of its object.
static int print_where(const char* name) {
  void* implementation = dlsym(RTLD_DEFAULT, name);
  Dl_info info;
  struct link_map* map = NULL;
  if (implementation == NULL || !dladdr1(implementation, &info, (void**)&map, RTLD_DL_LINKMAP)) {
    return 1;
  }
  const ElfW(Addr) vaddr = (ElfW(Addr))implementation - map->l_addr;
  const ElfW(Ehdr)* header = (const ElfW(Ehdr)*)map->l_addr;
  const ElfW(Phdr)* segments = (const ElfW(Phdr)*)(map->l_addr + header->e_phoff);
  for (int i = 0; i < header->e_phnum; ++i) {
    const ElfW(Phdr)* s = &segments[i];
    if (s->p_type == PT_LOAD && vaddr >= s->p_vaddr && vaddr < s->p_vaddr + s->p_filesz) {
      printf("%s %s 0x%lx\n", name, info.dli_fname,
             (unsigned long)(vaddr - s->p_vaddr + s->p_offset));
      return 0;
    }
  }
  return 1;
}

// Until `path` exists: raw system calls only, nothing counted is called.
static void wait_for(const char* path) {
  static const char ready[] = "ready\n";
  write(1, ready, sizeof ready - 1);
  const struct timespec pause = {0, 2000000};
  while (access(path, F_OK) != 0) nanosleep(&pause, NULL);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "where") == 0) {
    return print_where("strlen") | print_where("memcpy") | print_where("strcmp");
  }
  if (argc > 2 && strcmp(argv[1], "wait") == 0) wait_for(argv[2]);
  static char* blocks[kCalls];
  char text[64] = "a string the program measures";
  char copy[64];
  long sum = 0;
  for (int i = 0; i < kCalls; ++i) blocks[i] = malloc_fn(16 + (size_t)i % 64);
  for (int i = 0; i < kCalls; ++i) free_fn(blocks[i]);
  for (int i = 0; i < kSmall; ++i) {
    char* p = calloc_fn(4, 8);
    p = realloc_fn(p, 64);
    free_fn(p);
  }
  for (int i = 0; i < kCalls; ++i) {
    sum += (long)strlen_fn(text + i % 8);
    memcpy_fn(copy, text, 8 + (size_t)i % 16);
    sum += strcmp_fn(copy, text) != 0;
    sum += count_calls_work(i);
  }
  printf("%ld\n", sum);
  return 0;
}
