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
uint64_t entry_frame(const SavedRegs& regs) noexcept { return regs.slot[x86_64::kSp]; }

bool read_return_address(const SavedRegs& regs, uint64_t& address) noexcept {
  return safe_read(&address, entry_frame(regs), 8);
}

bool replace_return_address(SavedRegs& regs, uint64_t stub) noexcept {
  return safe_write(entry_frame(regs), &stub, 8);
}

bool frame_returns_to(uint64_t frame, uint64_t stub) noexcept {
  uint64_t in_slot = 0;
  return safe_read(&in_slot, frame, 8) && in_slot == stub;
}

// dprobe_return_common pushes r15 first in memory, rax last.
void load_return_regs(const uint64_t* saved, uint64_t frame, uint64_t caller,
                      SavedRegs& regs) noexcept {
  using namespace x86_64;
  constexpr Reg kPushOrder[] = {kR15, kR14, kR13, kR12, kR11, kR10, kR9, kR8,
                                kDi,  kSi,  kBp,  kBx,  kDx,  kCx,  kAx};
  for (size_t i = 0; i < std::size(kPushOrder); ++i) regs.slot[kPushOrder[i]] = saved[i];
  regs.slot[kSp] = frame + 8;  // as after the function's own ret
  regs.slot[kIp] = caller;
  regs.slot[kFlags] = 0;  // not saved: nothing in the calling convention outlives a ret in them
  regs.slot[kCs] = 0x33;  // the 64-bit user code and data segments
  regs.slot[kSs] = 0x2b;
  regs.slot[kDs] = regs.slot[kEs] = regs.slot[kFs] = regs.slot[kGs] = 0;
  regs.slot[kOrigAx] = ~uint64_t{0};  // not in a system call
}

}  // namespace dprobe::arch
