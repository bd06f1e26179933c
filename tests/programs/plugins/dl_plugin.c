// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The library tests/programs/dl_host.c loads and unloads again and again
// (built as libdprobe_test_plugin.so, next to the test programs), for the
// probes that wait for an object to be loaded. plugin_func(x) is the
// probed function. With DPROBE_TEST_PLUGIN_CTOR set in the environment,
// the library's constructor calls plugin_func(-1) and its destructor
// plugin_func(-2): the constructor runs before dlopen returns, so a probe
// armed only after dlopen would miss it. plugin_func is also an SDT point,
// dprobe_plugin:called, guarded by its semaphore: on every load the
// semaphore starts at 0 again, and the point fires only once a tracer has
// counted the new copy up (tests/integration/sdt_test.cc).
#define _SDT_HAS_SEMAPHORES 1
#include <stdlib.h>
#include <sys/sdt.h>

__extension__ unsigned short dprobe_plugin_called_semaphore __attribute__((unused))
__attribute__((section(".probes")));

static volatile long sink;

__attribute__((noinline, used, visibility("default"))) long plugin_func(long x) {
  if (dprobe_plugin_called_semaphore) DTRACE_PROBE1(dprobe_plugin, called, x);
  sink += x;
  return sink;
}

__attribute__((constructor)) static void plugin_init(void) {
  if (getenv("DPROBE_TEST_PLUGIN_CTOR") != NULL) plugin_func(-1);
}

__attribute__((destructor)) static void plugin_fini(void) {
  if (getenv("DPROBE_TEST_PLUGIN_CTOR") != NULL) plugin_func(-2);
}
