// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Return stubs: a pool of tiny code stubs, one per live return-probe
// instance, that a probed function's hijacked return address points to.
// Each stub has its own unwind information (an .eh_frame FDE) saying "the
// return address of this frame is stored at data slot i", so that C++
// exceptions, pthread cancellation and backtrace(3) walk through a
// hijacked frame to the real caller, as the kernel's unwinder walks
// through its rethook trampoline.
//
//   auto stubs = ReturnStubs::create(4096, slots, sizeof(Slot));
//   register_frames(stubs->eh_frame());        // with the program's unwinder
//   uint64_t ra = stubs->address(i);           // write into the return slot
//   stubs->index_of(ra);                       // and back
#ifndef DPROBE_ARCH_RUNTIME_RETURN_STUBS_H_
#define DPROBE_ARCH_RUNTIME_RETURN_STUBS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/result.h"

namespace dprobe::arch {

class ReturnStubs {
 public:
  // `count` stubs; stub i's return address is read from the 8 bytes at
  // data + i * stride (the caller keeps the real return address there).
  static Result<ReturnStubs> create(uint32_t count, uint64_t data, uint64_t stride);

  uint64_t address(uint32_t index) const { return code_ + kHeaderBytes + index * kStubBytes + 1; }
  std::optional<uint32_t> index_of(uint64_t address) const;
  bool contains(uint64_t address) const { return address >= code_ && address < code_end_; }
  uint32_t count() const { return count_; }

  // The unwind information of every stub, ready for __register_frame.
  const std::vector<uint8_t>& eh_frame() const { return eh_frame_; }

 private:
  static constexpr uint64_t kHeaderBytes = 16;  // the common trampoline's address
  static constexpr uint64_t kStubBytes = 16;
  ReturnStubs(uint64_t code, uint32_t count);
  uint64_t code_ = 0;
  uint64_t code_end_ = 0;
  uint32_t count_ = 0;
  std::vector<uint8_t> eh_frame_;
};

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_RETURN_STUBS_H_
