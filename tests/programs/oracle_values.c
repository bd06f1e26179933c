// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Deterministic calls for tests/oracle/run_values.sh, which traces them with
// the kernel's uprobes and with dprobe and compares the fetched values.
#include <stdint.h>
#include <stdio.h>

struct record {
  uint8_t u8;
  int16_t s16;
  uint32_t u32;
  int64_t s64;
  char tag;
  uint32_t flags;
  uint32_t values[4];
  const char* name;
};

__attribute__((noinline)) long ov_ints(int a, long b, unsigned c, short d) { return a + b + c + d; }

__attribute__((noinline)) int ov_string(const char* text, char mark) { return text[0] + mark; }

__attribute__((noinline)) int ov_record(const struct record* r) { return r->u8 + r->tag; }

int main(void) {
  static const char* const names[] = {"alpha", "beta", "gamma delta", ""};
  long sum = 0;
  for (int i = 0; i < 4; ++i) {
    sum += ov_ints(i - 2, -1000000000L * i, 4000000000u - (unsigned)i, (short)(-300 + i));
    sum += ov_string(names[i], (char)('a' + i));
    struct record r = {(uint8_t)(250 + i), (int16_t)(-i * 1000), 0xdeadbeefu + (uint32_t)i,
                       -(int64_t)i * 123456789012LL, (char)('A' + i), 0x5au << i,
                       {1u + (uint32_t)i, 2, 3, 4}, names[i]};
    sum += ov_record(&r);
  }
  printf("%ld\n", sum);
  return 0;
}
