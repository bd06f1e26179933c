// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Loads and unloads a library again and again, for the probes that wait
// for their object (tests/integration/pending_probes_test.cc):
//   dl_host DIR CYCLES [ctor|thread]
// Each cycle dlopens DIR/libdprobe_test_plugin.so, calls plugin_func(1)
// and plugin_func(2), dlcloses it and checks that it is really gone
// (RTLD_NOLOAD finds nothing). `ctor` sets DPROBE_TEST_PLUGIN_CTOR first:
// the library's constructor then calls plugin_func(-1), its destructor
// plugin_func(-2). `thread` runs the cycles in a second thread while main
// waits for it. The library's counter starts at 0 on every load, so the
// values plugin_func returns are checked too.
// Prints "dl_host: rss CYCLE KIB" (VmRSS) after cycle 1000 and after the
// last one, then "dl_host: done CYCLES"; exits 0, or 3 when the library
// stays loaded after dlclose, 4 when plugin_func returns a wrong value.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef long (*PluginFunc)(long);

static long vm_rss_kib(void) {
  FILE* status = fopen("/proc/self/status", "r");
  if (status == NULL) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof(line), status) != NULL) {
    if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  }
  fclose(status);
  return kib;
}

static char path[4096];
static long cycles;
static long base;  // what the constructor added

static int run_cycles(void) {
  for (long cycle = 1; cycle <= cycles; ++cycle) {
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      fprintf(stderr, "dl_host: %s\n", dlerror());
      return 1;
    }
    PluginFunc plugin_func = (PluginFunc)dlsym(handle, "plugin_func");
    if (plugin_func == NULL) {
      fprintf(stderr, "dl_host: %s\n", dlerror());
      return 1;
    }
    const long first = plugin_func(1);
    const long second = plugin_func(2);
    if (first != base + 1 || second != base + 3) {
      fprintf(stderr, "dl_host: cycle %ld: plugin_func returned %ld, %ld\n", cycle, first, second);
      return 4;
    }
    if (dlclose(handle) != 0) {
      fprintf(stderr, "dl_host: dlclose: %s\n", dlerror());
      return 1;
    }
    void* still = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (still != NULL) {
      fprintf(stderr, "dl_host: cycle %ld: the library is still loaded after dlclose\n", cycle);
      return 3;
    }
    if (cycle == 1000 || cycle == cycles) printf("dl_host: rss %ld %ld\n", cycle, vm_rss_kib());
  }
  printf("dl_host: done %ld\n", cycles);
  return 0;
}

static void* cycles_thread(void* result) {
  *(int*)result = run_cycles();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: dl_host DIR CYCLES [ctor|thread]\n");
    return 2;
  }
  const char* mode = argc > 3 ? argv[3] : "";
  if (strcmp(mode, "ctor") == 0) {
    setenv("DPROBE_TEST_PLUGIN_CTOR", "1", 1);
    base = -1;
  }
  snprintf(path, sizeof(path), "%s/libdprobe_test_plugin.so", argv[1]);
  cycles = strtol(argv[2], NULL, 10);
  if (strcmp(mode, "thread") != 0) return run_cycles();
  int result = 1;
  pthread_t thread;
  if (pthread_create(&thread, NULL, cycles_thread, &result) != 0) return 1;
  pthread_join(thread, NULL);
  return result;
}
