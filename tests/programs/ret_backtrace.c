// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// In-process unwinders called from inside probed functions, for
// tests/integration/return_backtrace_test.cc:
//   ret_backtrace [UNWINDER]
// UNWINDER is "backtrace" (backtrace(3), the default) or "unwind"
// (libgcc's _Unwind_Backtrace). main calls outer() twice; outer() calls
// probed_bt(), which takes a backtrace, calls inner_bt() and takes a
// short one; inner_bt() takes a full one and two short ones. probed_bt
// and inner_bt are the functions the test probes. Each backtrace prints
// one line:
//   TAG: N frame frame ...
// each frame the object's base name and the offset in it
// ("ret_backtrace_O0+0x1234", "libc.so.6+0x27249"), or "?" where dladdr
// knows no object: the same in every run of the same binary, traced or
// not. Prints "backtrace: ok" last and exits 0.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unwind.h>

#define PROBED __attribute__((noinline, used))

volatile long sink;
static int use_unwind;

struct collected {
  void** frames;
  int size;
  int count;
};

static _Unwind_Reason_Code collect(struct _Unwind_Context* context, void* arg) {
  struct collected* c = arg;
  if (c->count >= c->size) return _URC_END_OF_STACK;
  c->frames[c->count++] = (void*)_Unwind_GetIP(context);
  return _URC_NO_REASON;
}

// As backtrace(3): the caller of this function first.
static __attribute__((noinline)) int unwind_backtrace(void** frames, int size) {
  void* all[256];
  struct collected c = {all, size + 1 < 256 ? size + 1 : 256, 0};
  _Unwind_Backtrace(collect, &c);
  int count = 0;
  for (int i = 1; i < c.count; ++i) frames[count++] = all[i];
  return count;
}

static const char* base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash != NULL ? slash + 1 : path;
}

static __attribute__((noinline)) void print_backtrace(const char* tag, int size) {
  void* frames[64];
  const int count = use_unwind ? unwind_backtrace(frames, size) : backtrace(frames, size);
  printf("%s: %d", tag, count);
  for (int i = 0; i < count; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) != 0 && info.dli_fname != NULL) {
      printf(" %s+0x%lx", base_name(info.dli_fname),
             (unsigned long)((uintptr_t)frames[i] - (uintptr_t)info.dli_fbase));
    } else {
      printf(" ?");
    }
  }
  printf("\n");
}

PROBED long inner_bt(long x) {
  print_backtrace("inner", 64);
  print_backtrace("inner-4", 4);
  print_backtrace("inner-2", 2);
  sink += x;
  return x + 1;
}

PROBED long probed_bt(long x) {
  print_backtrace("probed", 64);
  const long y = inner_bt(x + 1);
  print_backtrace("probed-3", 3);
  sink += y;
  return y + 1;
}

PROBED long outer(long x) { return probed_bt(x) + 1; }

int main(int argc, char** argv) {
  use_unwind = argc > 1 && strcmp(argv[1], "unwind") == 0;
  long total = 0;
  for (long i = 0; i < 2; ++i) total += outer(i * 10);
  if (total != 4 + 14) {
    fprintf(stderr, "FAIL total %ld\n", total);
    return 1;
  }
  printf("backtrace: ok\n");
  return 0;
}
