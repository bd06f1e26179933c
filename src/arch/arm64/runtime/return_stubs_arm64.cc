// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// arm64's return-address hijack: at a function's entry the return address
// is the link register x30, not a stack word. The stubs (and their unwind
// information) are not built yet: return probes on arm64 are issue 11's,
// and until then a session that asks for them fails to set up.
#include "arch/runtime/return_stubs.h"

namespace dprobe::arch {

Result<ReturnStubs> ReturnStubs::create(uint32_t, uint64_t, uint64_t) {
  return fail("return probes are not on arm64 yet");
}

std::optional<uint32_t> ReturnStubs::index_of(uint64_t) const { return std::nullopt; }

// The call is known by the stack pointer at entry.
uint64_t entry_frame(const SavedRegs& regs) noexcept { return regs.slot[arm64::kSp]; }

bool read_return_address(const SavedRegs& regs, uint64_t& address) noexcept {
  address = regs.slot[arm64::kLr];
  return true;
}

bool replace_return_address(SavedRegs& regs, uint64_t stub) noexcept {
  regs.slot[arm64::kLr] = stub;
  return true;
}

// Where the callee keeps x30 once its prologue ran is its own business:
// whether the frame still returns to the stub cannot be read.
bool frame_returns_to(uint64_t, uint64_t) noexcept { return false; }

void load_return_regs(const uint64_t*, uint64_t, uint64_t, SavedRegs&) noexcept {}

}  // namespace dprobe::arch
