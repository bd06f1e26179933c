// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Doubles and floats in memory for the f32/f64 fetch types
// (tests/integration/float_types_test.cc): float_values(&d, &f) is called
// once per pair below, in order, and returns their sum as a double;
// float_half(f) returns half of each float as a float; float_scale(x, n,
// tag) is called with (0.5, 2, "two") and (-3.0, 7, "seven"): its integers
// come in the first integer registers, its double in the first vector one
// (tests/integration/float_return_test.cc reads them by the DWARF).
#include <math.h>
#include <stdio.h>

__attribute__((noinline, used)) double float_values(const double* d, const float* f) {
  return *d + (double)*f;
}

__attribute__((noinline, used)) float float_half(float f) { return f / 2; }

__attribute__((noinline, used)) double float_scale(double x, int n, const char* tag) {
  return x * n + (double)tag[0];
}

int main(void) {
  const double doubles[] = {1.5, -0.1, 1e300, INFINITY, NAN};
  const float floats[] = {0.25f, 3.0f, -1e-30f, -INFINITY, 2.5f};
  double sum = 0;
  for (int i = 0; i < 5; ++i) sum += float_values(&doubles[i], &floats[i]);
  for (int i = 0; i < 5; ++i) sum += float_half(floats[i]);
  sum += float_scale(0.5, 2, "two");
  sum += float_scale(-3.0, 7, "seven");
  printf("%d\n", sum != 0);
  return 0;
}
