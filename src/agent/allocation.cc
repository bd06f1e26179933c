// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every allocation the agent makes is the agent's work, and so is every
// exit handler its static objects register or run. The agent is linked
// with --wrap for these C library functions (src/CMakeLists.txt), so each
// call to them from the agent's code, from the libstdc++ linked into it
// (operator new, the exception pool's start-up, its statics) and from its
// crtbegin (__cxa_finalize at unload) comes here first: the C library
// still does the work, as before, but a probe on it does not count a call
// the program never made. One guard for every path, whatever thread and
// whatever part of the agent calls.
#include <cstddef>

#include "agent/hit/thread_trace.h"

extern "C" {
void* __real_malloc(size_t size);
void __real_free(void* block);
void* __real_calloc(size_t count, size_t size);
void* __real_realloc(void* block, size_t size);
void* __real_aligned_alloc(size_t alignment, size_t size);
int __real_posix_memalign(void** out, size_t alignment, size_t size);
int __real___cxa_atexit(void (*destructor)(void*), void* object, void* dso);
void __real___cxa_finalize(void* dso);
int __real___cxa_thread_atexit_impl(void (*destructor)(void*), void* object, void* dso);

#define DPROBE_WRAPPER __attribute__((visibility("hidden")))

DPROBE_WRAPPER void* __wrap_malloc(size_t size) {
  const dprobe::agent::AgentWork work;
  return __real_malloc(size);
}

DPROBE_WRAPPER void __wrap_free(void* block) {
  const dprobe::agent::AgentWork work;
  __real_free(block);
}

DPROBE_WRAPPER void* __wrap_calloc(size_t count, size_t size) {
  const dprobe::agent::AgentWork work;
  return __real_calloc(count, size);
}

DPROBE_WRAPPER void* __wrap_realloc(void* block, size_t size) {
  const dprobe::agent::AgentWork work;
  return __real_realloc(block, size);
}

DPROBE_WRAPPER void* __wrap_aligned_alloc(size_t alignment, size_t size) {
  const dprobe::agent::AgentWork work;
  return __real_aligned_alloc(alignment, size);
}

DPROBE_WRAPPER int __wrap_posix_memalign(void** out, size_t alignment, size_t size) {
  const dprobe::agent::AgentWork work;
  return __real_posix_memalign(out, alignment, size);
}

DPROBE_WRAPPER int __wrap___cxa_atexit(void (*destructor)(void*), void* object, void* dso) {
  const dprobe::agent::AgentWork work;
  return __real___cxa_atexit(destructor, object, dso);
}

DPROBE_WRAPPER void __wrap___cxa_finalize(void* dso) {
  const dprobe::agent::AgentWork work;
  __real___cxa_finalize(dso);
}

DPROBE_WRAPPER int __wrap___cxa_thread_atexit_impl(void (*destructor)(void*), void* object,
                                                   void* dso) {
  const dprobe::agent::AgentWork work;
  return __real___cxa_thread_atexit_impl(destructor, object, dso);
}
}
