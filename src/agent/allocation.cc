// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Every allocation the agent makes is the agent's work, and so is every
// exit handler its static objects register or run. The agent is linked
// with --wrap for these C library functions (src/CMakeLists.txt), so each
// call to them from the agent's code, from the libstdc++ linked into it
// (operator new, the exception pool's start-up, its statics) and from its
// crtbegin (__cxa_finalize at unload) comes here first. Allocations come
// from the agent's own heap (own_heap.h), so the program's allocator never
// sees them: neither a probe on malloc nor a count of the program's brk
// and mmap calls includes dprobe's. Exit handlers are registered by the C
// library as before, as the agent's work (a probe on it does not count a
// call the program never made). One guard for every path, whatever thread
// and whatever part of the agent calls.
#include <errno.h>

#include <cstddef>
#include <cstring>

#include "agent/hit/thread_trace.h"
#include "agent/own_heap.h"

namespace own_heap = dprobe::agent::own_heap;

namespace {

bool is_power_of_two(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

void* or_no_memory(void* block) {
  if (block == nullptr) errno = ENOMEM;
  return block;
}

}  // namespace

extern "C" {
int __real___cxa_atexit(void (*destructor)(void*), void* object, void* dso);
void __real___cxa_finalize(void* dso);
int __real___cxa_thread_atexit_impl(void (*destructor)(void*), void* object, void* dso);

#define DPROBE_WRAPPER __attribute__((visibility("hidden")))

DPROBE_WRAPPER void* __wrap_malloc(size_t size) { return or_no_memory(own_heap::allocate(size)); }

DPROBE_WRAPPER void __wrap_free(void* block) { own_heap::release(block); }

DPROBE_WRAPPER void* __wrap_calloc(size_t count, size_t size) {
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, size, &bytes)) return or_no_memory(nullptr);
  void* block = own_heap::allocate(bytes);
  if (block != nullptr) std::memset(block, 0, bytes);  // a block may be used again
  return or_no_memory(block);
}

DPROBE_WRAPPER void* __wrap_realloc(void* block, size_t size) {
  void* moved = own_heap::reallocate(block, size);
  return size == 0 ? moved : or_no_memory(moved);
}

DPROBE_WRAPPER void* __wrap_aligned_alloc(size_t alignment, size_t size) {
  if (!is_power_of_two(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return or_no_memory(own_heap::allocate(size, alignment));
}

DPROBE_WRAPPER int __wrap_posix_memalign(void** out, size_t alignment, size_t size) {
  if (!is_power_of_two(alignment) || alignment % sizeof(void*) != 0) return EINVAL;
  void* block = own_heap::allocate(size, alignment);
  if (block == nullptr) return ENOMEM;
  *out = block;
  return 0;
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
