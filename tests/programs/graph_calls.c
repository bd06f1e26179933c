// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A known call tree for tests/integration/function_graph_test.cc:
//   graph_calls [N]
// top(N) calls middle(i) for i < N, and each middle calls leaf twice;
// prints the sum.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, used)) int leaf(int x) { return x + 1; }

__attribute__((noinline, used)) int middle(int x) { return leaf(x) + leaf(x + 1); }

__attribute__((noinline, used)) int top(int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += middle(i);
  return sum;
}

int main(int argc, char** argv) {
  printf("%d\n", top(argc > 1 ? atoi(argv[1]) : 2));
  return 0;
}
