// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// How the stack unwinder reads the program's memory, tables and stacks
// alike, so that the agent hands over the reader of the probe (fault-safe
// copies, or process_vm_readv where a fault would kill the process).
//
//   UnwindMemory memory = safe_unwind_memory();
//   uint64_t word;
//   if (memory(&word, address, sizeof word)) ...
#ifndef DPROBE_CORE_UNWIND_MEMORY_H_
#define DPROBE_CORE_UNWIND_MEMORY_H_

#include <cstddef>
#include <cstdint>

namespace dprobe::core {

// trace::MemoryReader's shape, noexcept. True when all `size` bytes were
// copied.
struct UnwindMemory {
  bool (*read)(void* context, void* dst, uint64_t src, size_t size) noexcept;
  void* context;

  bool operator()(void* dst, uint64_t src, size_t size) const noexcept {
    return read(context, dst, src, size);
  }
};

// arch::safe_read: a fault is a failed read (the caller's SIGSEGV handler
// calls arch::fixup_memory_fault).
UnwindMemory safe_unwind_memory() noexcept;

}  // namespace dprobe::core

#endif  // DPROBE_CORE_UNWIND_MEMORY_H_
