// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/own_heap.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "arch/runtime/raw_syscall.h"

namespace dprobe::agent::own_heap {
namespace {

constexpr size_t kHeader = 16;     // before every block: keeps payloads 16-aligned
constexpr uint64_t kClasses = 13;  // 16 B << 12 = 64 KiB
constexpr size_t kChunk = size_t{1} << 20;
constexpr size_t kPage = 4096;

// A class's block: kind is the class. A mapping's: kind is the mapping's
// length (never below a page, so never a class), `offset` how far into it
// the payload starts.
struct Header {
  uint64_t kind;
  uint64_t offset;
};

struct FreeBlock {
  FreeBlock* next;
};

constinit FreeBlock* g_free[kClasses] = {};
constinit char* g_bump = nullptr;
constinit char* g_bump_end = nullptr;
constinit std::atomic<bool> g_locked{false};

size_t capacity_of(uint64_t cls) { return size_t{16} << cls; }

uint64_t class_of(size_t size) {
  uint64_t cls = 0;
  while (capacity_of(cls) < size) ++cls;
  return cls;
}

Header* header_of(void* block) {
  return reinterpret_cast<Header*>(static_cast<char*>(block) - kHeader);
}

// The agent's own system calls, from its own text: none of them is the
// program's, and none goes through the C library.
void* map(size_t length) {
  const long got = arch::raw_syscall(SYS_mmap, 0, static_cast<long>(length), PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (got < 0 && got > -4096) return nullptr;
  return reinterpret_cast<void*>(got);
}

void unmap(void* at, size_t length) {
  arch::raw_syscall(SYS_munmap, reinterpret_cast<long>(at), static_cast<long>(length));
}

void lock() {
  while (g_locked.exchange(true, std::memory_order_acquire)) arch::raw_syscall(SYS_sched_yield);
}

void unlock() { g_locked.store(false, std::memory_order_release); }

void* allocate_mapped(size_t size, size_t alignment) {
  const size_t length = (size + kHeader + alignment + kPage - 1) & ~(kPage - 1);
  char* base = static_cast<char*>(map(length));
  if (base == nullptr) return nullptr;
  const auto first = reinterpret_cast<uintptr_t>(base) + kHeader;
  char* payload =
      base + (((first + alignment - 1) & ~(alignment - 1)) - reinterpret_cast<uintptr_t>(base));
  *header_of(payload) = {length, static_cast<uint64_t>(payload - base)};
  return payload;
}

// Under the lock.
void* allocate_in_class(uint64_t cls) {
  if (FreeBlock* block = g_free[cls]) {
    g_free[cls] = block->next;
    return block;
  }
  const size_t whole = kHeader + capacity_of(cls);
  if (g_bump == nullptr || static_cast<size_t>(g_bump_end - g_bump) < whole) {
    g_bump = static_cast<char*>(map(kChunk));
    if (g_bump == nullptr) return nullptr;
    g_bump_end = g_bump + kChunk;
  }
  char* payload = g_bump + kHeader;
  g_bump += whole;
  *header_of(payload) = {cls, 0};
  return payload;
}

size_t usable_size(void* block) {
  const Header& header = *header_of(block);
  if (header.kind < kClasses) return capacity_of(header.kind);
  return header.kind - header.offset;
}

}  // namespace

void* allocate(size_t size, size_t alignment) noexcept {
  if (size == 0) size = 1;
  if (alignment > kHeader || size > capacity_of(kClasses - 1)) {
    return allocate_mapped(size, alignment < kHeader ? kHeader : alignment);
  }
  lock();
  void* block = allocate_in_class(class_of(size));
  unlock();
  return block;
}

void release(void* block) noexcept {
  if (block == nullptr) return;
  Header& header = *header_of(block);
  if (header.kind >= kClasses) {
    unmap(static_cast<char*>(block) - header.offset, header.kind);
    return;
  }
  lock();
  auto* free_block = static_cast<FreeBlock*>(block);
  free_block->next = g_free[header.kind];
  g_free[header.kind] = free_block;
  unlock();
}

void* reallocate(void* block, size_t size) noexcept {
  if (block == nullptr) return allocate(size);
  if (size == 0) {
    release(block);
    return nullptr;
  }
  const size_t usable = usable_size(block);
  if (size <= usable) return block;
  void* moved = allocate(size);
  if (moved == nullptr) return nullptr;
  std::memcpy(moved, block, usable);
  release(block);
  return moved;
}

void lock_for_fork() noexcept { lock(); }
void unlock_after_fork() noexcept { unlock(); }

}  // namespace dprobe::agent::own_heap
