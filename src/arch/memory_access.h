// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The traced program's memory as an instruction's emulation sees it (x86_64
// branches, arm64 simulation): a read or write that may fault returns false
// and then has changed nothing. The agent implements it with fault-safe
// accesses; tests with a buffer.
//
//   class Buffer final : public arch::MemoryAccess { ... };
#ifndef DPROBE_ARCH_MEMORY_ACCESS_H_
#define DPROBE_ARCH_MEMORY_ACCESS_H_

#include <cstddef>
#include <cstdint>
#include <functional>

namespace dprobe::arch {

// Reads the program's memory for an analysis beyond the bytes it was given
// (a jump table in .rodata): false where it cannot (unmapped). The agent
// reads its own process, fault-safe; tests a buffer. Not for the hit path.
using ReadMemory = std::function<bool(uint64_t address, void* out, size_t size)>;

class MemoryAccess {
 public:
  virtual bool read(uint64_t address, void* dst, size_t size) = 0;
  virtual bool write(uint64_t address, const void* src, size_t size) = 0;

 protected:
  ~MemoryAccess() = default;
};

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_MEMORY_ACCESS_H_
