// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// arm64 return stubs. At a function's entry its return address is the link
// register x30, not a stack word: the hijack replaces x30 in the hit's
// registers. Stub i, 16 bytes:
//
//   +0   nop                 padding: an unwinder looks up "return address
//                            - 1", which must fall in stub i's FDE
//   +4   movz x16, #i        the instance (x16: the intra-call scratch)
//   +8   ldr x17, header     dprobe_return_common's address, at the table's
//   +12  br x17              start (within a literal load's ±1 MiB)
//
// Its FDE (arch/runtime/return_stubs.cc): the return address (column 30)
// is saved at data slot i, and the caller's sp is the stub's own.
#include <cstring>

#include "arch/runtime/return_stubs.h"
#include "base/hit_path.h"

namespace dprobe::arch {
namespace {

void put_word(uint8_t* at, uint32_t word) { std::memcpy(at, &word, 4); }

}  // namespace

const StubUnwindRules kStubUnwindRules = {30 /* x30 */, 31 /* sp */, 16};

void ReturnStubs::write_stub(uint8_t* stub, uint32_t index, uint64_t begin, uint64_t header) {
  const auto back = static_cast<int64_t>(header - (begin + 8));    // from the ldr, negative
  put_word(stub, 0xd503201fu);                                     // nop
  put_word(stub + 4, 0xd2800000u | (index & 0xffffu) << 5 | 16u);  // movz x16, #index
  put_word(stub + 8, 0x58000000u | (static_cast<uint32_t>(back >> 2) & 0x7ffffu) << 5 | 17u);
  put_word(stub + 12, 0xd61f0220u);  // br x17
}

// The call is known by the stack pointer at entry, which is also the one
// its caller has back after the return.
DPROBE_HIT_PATH uint64_t entry_frame(const SavedRegs& regs) noexcept {
  return regs.slot[arm64::kSp];
}

DPROBE_HIT_PATH bool read_return_address(const SavedRegs& regs, uint64_t& address) noexcept {
  address = regs.slot[arm64::kLr];
  return true;
}

DPROBE_HIT_PATH bool replace_return_address(SavedRegs& regs, uint64_t stub) noexcept {
  regs.slot[arm64::kLr] = stub;
  return true;
}

// Where the callee keeps x30 once its prologue ran is its own business:
// whether the frame still returns to the stub cannot be read, so a frame
// is taken to be there until its stub is returned through.
DPROBE_HIT_PATH bool frame_returns_to(uint64_t, uint64_t) noexcept { return true; }

// dprobe_return_common saves x0..x30 in the frame's first slots and leaves
// room for sp, pc and pstate before its vector registers
// (return_trampoline_arm64.S).
static_assert(sizeof(SavedRegs) == 272);
DPROBE_HIT_PATH void complete_return_regs(SavedRegs& regs, uint64_t frame,
                                          uint64_t caller) noexcept {
  regs.slot[arm64::kLr] = caller;  // as the function's own ret leaves it
  regs.slot[arm64::kSp] = frame;
  regs.slot[arm64::kPc] = caller;
  regs.slot[arm64::kPstate] = 0;
}

}  // namespace dprobe::arch
