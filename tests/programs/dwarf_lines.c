// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Source lines for the debug-information tests (tests/unit/symbols/
// debug_info_test.cc, `dprobe list -L`): a function with a loop, a static
// function inlined into it, and lines without code. The tests name lines
// by number: keep the layout, or update the tests with it.
#include <stdio.h>
#include <stdlib.h>

struct item {
  int id;
  const char *name;
};

static inline __attribute__((always_inline)) int weight(const struct item *it) {
  int w = it->id * 3;
  return w + 1;
}

__attribute__((noinline)) int visit(const struct item *items, int count) {
  int total = 0;
  // A comment: no code on this line.
  for (int i = 0; i < count; i++) {
    total += weight(&items[i]);
    if (items[i].name[0] == 'x') total -= 1;
  }
  return total;
}

int main(int argc, char **argv) {
  struct item items[] = {{1, "a"}, {2, "xb"}, {3, "c"}};
  int n = argc > 1 ? atoi(argv[1]) : 3;
  printf("%d\n", visit(items, n));
  return weight(&items[0]) == 4 ? 0 : 1;
}
