// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every allocation the agent makes is the agent's work. The agent is linked
// with --wrap for the C library's allocator (src/CMakeLists.txt), so each
// call to it from the agent's code and from the libstdc++ linked into it
// (operator new, the exception pool's start-up) comes here first: the
// program's allocator still does the work, as before, but a probe on it
// does not count a call the program never made. One guard for every path,
// whatever thread and whatever part of the agent allocates.
#include <cstddef>

#include "agent/thread_trace.h"

extern "C" {
void* __real_malloc(size_t size);
void __real_free(void* block);
void* __real_calloc(size_t count, size_t size);
void* __real_realloc(void* block, size_t size);
void* __real_aligned_alloc(size_t alignment, size_t size);
int __real_posix_memalign(void** out, size_t alignment, size_t size);

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
}
