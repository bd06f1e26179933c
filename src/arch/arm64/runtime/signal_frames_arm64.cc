// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// arm64 replaces one aligned instruction by one branch, written in one
// store: a pc is either at the probe or outside it, never inside, so no
// handler can return into the middle of a jump and nothing is read.
#include "arch/runtime/signal_frames.h"

namespace dprobe::arch {

FrameScan interrupted_places_above(uint64_t, StackBounds, const Restorers&,
                                   std::span<InterruptedPlace>, std::span<uint64_t>) noexcept {
  return {};
}

}  // namespace dprobe::arch
