// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// x86_64 return stubs. Stub i, 16 bytes:
//
//   +0   cc                  padding: an unwinder looks up "return address
//                            - 1", which must fall in stub i's FDE
//   +1   68 ii ii ii ii      push imm32 i   (into the popped return slot)
//   +6   ff 25 dd dd dd dd   jmp [rip+d]    -> dprobe_return_common
//   +12  cc cc cc cc
//
// Its FDE (arch/runtime/return_stubs.cc): the return address is saved at
// data slot i, and the caller's stack pointer is the stub's own.
#include <cstring>

#include "arch/runtime/return_stubs.h"
#include "arch/runtime/safe_memory.h"
#include "base/hit_path.h"

namespace dprobe::arch {

const StubUnwindRules kStubUnwindRules = {16 /* rip */, 7 /* rsp */, 8};

// `stub_begin` is where the stub's padding byte sits in memory.
void ReturnStubs::write_stub(uint8_t* stub, uint32_t index, uint64_t stub_begin, uint64_t literal) {
  stub[0] = 0xcc;
  stub[1] = 0x68;
  std::memcpy(stub + 2, &index, 4);
  stub[6] = 0xff;
  stub[7] = 0x25;
  const auto displacement = static_cast<int32_t>(literal - (stub_begin + 12));
  std::memcpy(stub + 8, &displacement, 4);
  std::memset(stub + 12, 0xcc, 4);
}

// At entry the return address is the word at the stack pointer, where
// `call` pushed it.
DPROBE_HIT_PATH uint64_t entry_frame(const SavedRegs& regs) noexcept {
  return regs.slot[x86_64::kSp];
}

DPROBE_HIT_PATH bool read_return_address(const SavedRegs& regs, uint64_t& address) noexcept {
  return safe_read(&address, entry_frame(regs), 8);
}

DPROBE_HIT_PATH bool replace_return_address(SavedRegs& regs, uint64_t stub) noexcept {
  return safe_write(entry_frame(regs), &stub, 8);
}

DPROBE_HIT_PATH bool frame_returns_to(uint64_t frame, uint64_t stub) noexcept {
  uint64_t in_slot = 0;
  return safe_read(&in_slot, frame, 8) && in_slot == stub;
}

// dprobe_return_common builds the frame below the return slot, which holds
// the stub's index at frame + 200 (return_trampoline_x86_64.S).
static_assert(sizeof(SavedRegs) == 200);
DPROBE_HIT_PATH void complete_return_regs(SavedRegs& regs, uint64_t frame,
                                          uint64_t caller) noexcept {
  using namespace x86_64;
  regs.slot[kSp] = frame + 8;  // as after the function's own ret
  regs.slot[kIp] = caller;
  regs.slot[kFlags] = 0;
}

}  // namespace dprobe::arch
