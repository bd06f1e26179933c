// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Deterministic arguments for tests/integration/fetch_test.cc: functions of
// 1 to 8 integer arguments (the 7th and 8th on the stack on x86_64), a
// record of every scalar type with a bitfield, an array, strings and a
// function pointer, NULL and bad pointers, and global variables for @SYM.
// Each function is called a fixed number of times (see main). Prints
// "args: started" before main and "args: ok" last, and exits 0.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define PROBED __attribute__((noinline, used))

// The layout the tests name offsets of: checked here, at compile time.
struct rec {
  uint8_t u8;    // 0
  int8_t s8;     // 1
  uint16_t u16;  // 2
  uint32_t u32;  // 4
  uint64_t u64;  // 8
  int16_t s16;   // 16
  char ch;       // 18
  int32_t s32;   // 20
  int64_t s64;   // 24
  unsigned lo : 3, mid : 5, hi : 12;  // 32: bits 0-2, 3-7, 8-19 of a u32
  uint32_t arr[4];                    // 36
  const char* str;                    // 56
  char buf[16];                       // 64
  const char* const* names;           // 80
  void (*fn)(void);                   // 88
};
_Static_assert(offsetof(struct rec, s8) == 1, "layout");
_Static_assert(offsetof(struct rec, u16) == 2, "layout");
_Static_assert(offsetof(struct rec, u32) == 4, "layout");
_Static_assert(offsetof(struct rec, u64) == 8, "layout");
_Static_assert(offsetof(struct rec, s16) == 16, "layout");
_Static_assert(offsetof(struct rec, ch) == 18, "layout");
_Static_assert(offsetof(struct rec, s32) == 20, "layout");
_Static_assert(offsetof(struct rec, s64) == 24, "layout");
_Static_assert(offsetof(struct rec, arr) == 36, "layout");
_Static_assert(offsetof(struct rec, str) == 56, "layout");
_Static_assert(offsetof(struct rec, buf) == 64, "layout");
_Static_assert(offsetof(struct rec, names) == 80, "layout");
_Static_assert(offsetof(struct rec, fn) == 88, "layout");

volatile long sink;

// For @SYM: a number, a string buffer, a pointer to a string.
long global_counter = 123456789;
char global_name[] = "global-name";
const char* global_ptr = "pointed-to";

PROBED void callback(void) { sink += 1; }

PROBED long args1(long a) { return sink += a; }
PROBED long args2(long a, long b) { return sink += a + b; }
PROBED long args3(long a, long b, long c) { return sink += a + b + c; }
PROBED long args4(long a, long b, long c, long d) { return sink += a + b + c + d; }
PROBED long args5(long a, long b, long c, long d, long e) { return sink += a + b + c + d + e; }
PROBED long args6(long a, long b, long c, long d, long e, long f) {
  return sink += a + b + c + d + e + f;
}
PROBED long args7(long a, long b, long c, long d, long e, long f, long g) {
  return sink += a + b + c + d + e + f + g;
}
PROBED long args8(long a, long b, long c, long d, long e, long f, long g, long h) {
  return sink += a + b + c + d + e + f + g + h;
}

PROBED long take_rec(const struct rec* r) { return sink += r->u8 + r->arr[0]; }

// Points into the middle of a record: -OFFS reaches its start.
PROBED long take_mid(const uint64_t* p) { return sink += (long)*p; }

PROBED long take_fn(void (*fn)(void)) {
  sink += fn != NULL;
  return sink;
}

// Given NULL and (void*)1: a probe reading through them must fault safely.
PROBED long take_ptrs(const char* s, const struct rec* r) {
  sink += s != NULL;
  sink += r != NULL;
  return sink;
}

// Small signed values in small registers.
PROBED long take_small(signed char a, short b, int c, unsigned char d) {
  return sink += a + b + c + d;
}

// Strings longer than a trace record takes (4096 bytes with the NUL).
PROBED long take_str(const char* s) { return sink += s[0]; }

static char long_string[5000];
static char exact_string[4096];

static const char* const kNames[] = {"alpha", "beta", "gamma"};

// Runs before main, right after the preloaded dprobe agent lets the
// program go: a refused definition must stop the program before this.
__attribute__((constructor)) static void started(void) {
  static const char kStarted[] = "args: started\n";
  if (write(1, kStarted, sizeof(kStarted) - 1) < 0) _exit(3);
}

int main(void) {
  args1(-1);
  args2(1, 2);
  args3(1, 2, 3);
  args4(1, 2, 3, 4);
  args5(1, 2, 3, 4, 5);
  args6(1, 2, 3, 4, 5, 6);
  args7(11, 22, 33, 44, 55, 66, 77);
  args8(11, 22, 33, 44, 55, 66, -77, 0x1234567890abcdefL);

  struct rec r = {
      .u8 = 200,
      .s8 = -5,
      .u16 = 60000,
      .u32 = 4000000000u,
      .u64 = 18000000000000000000u,
      .s16 = -30000,
      .ch = 'Q',
      .s32 = -2000000000,
      .s64 = -9000000000000000000,
      .lo = 5,
      .mid = 19,
      .hi = 2748,
      .arr = {1, 2, 3, 0xdeadbeef},
      .str = "hello world",
      .buf = "buffer",
      .names = kNames,
      .fn = callback,
  };
  for (int i = 0; i < 3; ++i) take_rec(&r);
  take_mid(&r.u64);
  take_fn(callback);
  take_ptrs(NULL, NULL);
  take_ptrs((const char*)1, (const struct rec*)1);
  take_small(-7, -300, -100000, 250);
  for (size_t i = 0; i + 1 < sizeof(long_string); ++i) long_string[i] = (char)('a' + i % 26);
  for (size_t i = 0; i + 1 < sizeof(exact_string); ++i) exact_string[i] = 'x';
  take_str(long_string);   // 4999 characters
  take_str("");            // none
  take_str(exact_string);  // 4095 characters
  printf("args: ok\n");
  return 0;
}
