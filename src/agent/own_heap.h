// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The agent's own heap. Every allocation the agent makes (allocation.cc
// routes them here) comes from memory it maps itself, never from the
// program's malloc. Why: the program's allocator then starts and grows
// exactly as it would untraced (its getrandom, brk and mmap calls, the
// layout of its heap, its malloc statistics), so neither a count of the
// program's system calls nor a probe on its allocator sees dprobe's work.
//
// Not a fast allocator, and need not be: the agent allocates when it
// starts, arms and reads its commands, never on a hit. Blocks of 16 bytes
// to 64 KiB come in powers of two from free lists over 1 MiB chunks;
// larger or more strictly aligned ones are mappings of their own.
//
//   void* p = own_heap::allocate(100);
//   own_heap::release(p);
#ifndef DPROBE_AGENT_OWN_HEAP_H_
#define DPROBE_AGENT_OWN_HEAP_H_

#include <cstddef>

namespace dprobe::agent::own_heap {

// nullptr when no memory can be mapped. `alignment`: a power of two.
void* allocate(size_t size, size_t alignment = 16) noexcept;
// Of a block from this heap, or nullptr.
void release(void* block) noexcept;
// As realloc: nullptr frees; the contents kept up to the smaller size.
void* reallocate(void* block, size_t size) noexcept;

// Around fork: no other thread may be half-way through the free lists
// when the address space is copied (fork.cc).
void lock_for_fork() noexcept;
void unlock_after_fork() noexcept;

}  // namespace dprobe::agent::own_heap

#endif  // DPROBE_AGENT_OWN_HEAP_H_
