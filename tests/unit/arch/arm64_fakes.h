// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What the arm64 simulation and probe tests run a hit against: memory of
// mapped bytes only, and registers that each hold a recognisable value.
#ifndef DPROBE_TESTS_UNIT_ARCH_ARM64_FAKES_H_
#define DPROBE_TESTS_UNIT_ARCH_ARM64_FAKES_H_

#include <cstddef>
#include <cstdint>
#include <map>

#include "arch/arm64/regs.h"
#include "arch/memory_access.h"

namespace dprobe::arch::arm64 {

// Memory of mapped bytes; any unmapped byte faults the whole access, which
// then changes nothing.
class FakeMemory final : public MemoryAccess {
 public:
  void put(uint64_t address, uint64_t value, unsigned size) {
    for (unsigned i = 0; i < size; ++i)
      bytes_[address + i] = static_cast<uint8_t>(value >> (8 * i));
  }

  bool read(uint64_t address, void* dst, size_t size) override {
    ++reads;
    for (size_t i = 0; i < size; ++i) {
      if (bytes_.count(address + i) == 0) return false;
    }
    auto* out = static_cast<uint8_t*>(dst);
    for (size_t i = 0; i < size; ++i) out[i] = bytes_[address + i];
    return true;
  }
  bool write(uint64_t, const void*, size_t) override {
    ++writes;
    return false;
  }

  int reads = 0;
  int writes = 0;

 private:
  std::map<uint64_t, uint8_t> bytes_;
};

// Every register holds a recognisable value; pc is the probed address.
inline SavedRegs registers_at(uint64_t pc) {
  SavedRegs regs;
  for (uint16_t i = 0; i < kRegCount; ++i) regs.slot[i] = 0x1111111100000000 + i;
  regs.slot[kPc] = pc;
  regs.slot[kPstate] = 0;
  return regs;
}

}  // namespace dprobe::arch::arm64

#endif  // DPROBE_TESTS_UNIT_ARCH_ARM64_FAKES_H_
