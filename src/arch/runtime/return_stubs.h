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

#include "arch/probe_insn.h"
#include "base/result.h"

namespace dprobe::arch {

// How an unwinder goes through a stub (the ISA's DWARF columns): the CFA is
// put `cfa_offset` above the stub's stack pointer, with the stack pointer
// given explicitly as CFA - cfa_offset: a zero-size frame would share its
// CFA with the hijacked function's frame, and libgcc, which tells frames
// apart by CFA, would take the stub for the frame of the exception's
// handler. The return address is read from the instance's data slot.
struct StubUnwindRules {
  uint8_t return_column;
  uint8_t sp_column;
  uint8_t cfa_offset;  // a multiple of 8
};
extern const StubUnwindRules kStubUnwindRules;

// ---- The return-address hijack (the kernel's arch_rethook_prepare and
// arch_rethook_fixup_return), at a probed function's first instruction.

// The frame of the call: where its return address is kept (x86_64: the
// stack slot `call` pushed it to, the stack pointer at entry). A return
// instance is known by it: frames above it are the callee's, gone once a
// longjmp or an exception passed it.
uint64_t entry_frame(const SavedRegs& regs) noexcept;
// The function's return address; false when it cannot be read.
bool read_return_address(const SavedRegs& regs, uint64_t& address) noexcept;
// Makes the function return to `stub` instead; false when it cannot.
bool replace_return_address(SavedRegs& regs, uint64_t stub) noexcept;
// Whether the return address of the call at `frame` still is `stub`
// (false once the frame was left or reused).
bool frame_returns_to(uint64_t frame, uint64_t stub) noexcept;
// Completes the frame dprobe_return_common saved the general registers in
// (each ISA's return_trampoline_*.S), as the function's own return leaves
// it: the stack pointer past `frame`, the caller resumed at `caller`, no
// flags (nothing in the calling convention outlives a return in them).
// The fixed slots (arch::fill_fixed_slots) stay the caller's to fill.
void complete_return_regs(SavedRegs& regs, uint64_t frame, uint64_t caller) noexcept;

class ReturnStubs {
 public:
  // `count` stubs; stub i's return address is read from the 8 bytes at
  // data + i * stride (the caller keeps the real return address there).
  static Result<ReturnStubs> create(uint32_t count, uint64_t data, uint64_t stride);

  uint64_t address(uint32_t index) const {
    return code_ + kHeaderBytes + index * kStubBytes + kEntryOffset;
  }
  // Inline: every return-probed entry asks it of its return address.
  std::optional<uint32_t> index_of(uint64_t address) const {
    if (address < code_ + kHeaderBytes + kEntryOffset || address >= code_end_) return std::nullopt;
    const uint64_t offset = address - code_ - kHeaderBytes;
    if (offset % kStubBytes != kEntryOffset) return std::nullopt;
    return static_cast<uint32_t>(offset / kStubBytes);
  }
  bool contains(uint64_t address) const { return address >= code_ && address < code_end_; }
  uint32_t count() const { return count_; }

  // The unwind information of every stub, ready for __register_frame.
  const std::vector<uint8_t>& eh_frame() const { return eh_frame_; }

 private:
  static constexpr uint64_t kHeaderBytes = 16;  // the common trampoline's address
  static constexpr uint64_t kStubBytes = 16;
  // Where in a stub the hijacked return lands: past one instruction of
  // padding, since an unwinder looks "return address - 1" up.
#if defined(__x86_64__)
  static constexpr uint64_t kEntryOffset = 1;
#else
  static constexpr uint64_t kEntryOffset = 4;
#endif
  // The ISA's stub i, written at `stub` (which sits at `begin` in memory),
  // reaching dprobe_return_common through the header at `header`.
  static void write_stub(uint8_t* stub, uint32_t index, uint64_t begin, uint64_t header);
  ReturnStubs(uint64_t code, uint32_t count);
  uint64_t code_ = 0;
  uint64_t code_end_ = 0;
  uint32_t count_ = 0;
  std::vector<uint8_t> eh_frame_;
};

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_RETURN_STUBS_H_
