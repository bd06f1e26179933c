// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Loads the math library late (dlopen) and calls its floor, an IFUNC, 100
// times through the pointer dlsym gives: "ifunc_late: 4950". A probe on
// libm.so.6:floor is pending until the load, whose notification comes
// before the loader relocates the library: its resolver cannot run then.
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
  void* libm = dlopen("libm.so.6", RTLD_NOW);
  if (libm == NULL) return 2;
  double (*floor_fn)(double) = (double (*)(double))dlsym(libm, "floor");
  if (floor_fn == NULL) return 3;
  double sum = 0;
  for (int i = 0; i < 100; ++i) sum += floor_fn(i + 0.5);
  printf("ifunc_late: %g\n", sum);
  return 0;
}
