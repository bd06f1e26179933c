// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "arch/runtime/signal_frames.h"

#include <signal.h>
#include <sys/syscall.h>

#include "arch/runtime/raw_syscall.h"

namespace dprobe::arch {
namespace {

// The kernel's struct sigaction (rt_sigaction), not the C library's.
struct KernelSigaction {
  uint64_t handler;
  uint64_t flags;
  uint64_t restorer;
  uint64_t mask;
};
constexpr uint64_t kSaRestorer = 0x04000000;
constexpr int kSignals = 64;

}  // namespace

bool Restorers::holds(uint64_t word) const noexcept {
  for (size_t i = 0; i < count; ++i) {
    if (address[i] == word) return true;
  }
  return false;
}

Restorers current_restorers() noexcept {
  Restorers restorers;
  for (int sig = 1; sig <= kSignals; ++sig) {
    KernelSigaction action{};
    if (raw_failed(raw_syscall(SYS_rt_sigaction, sig, 0, raw_arg(&action), sizeof(action.mask)))) {
      continue;
    }
    if ((action.flags & kSaRestorer) == 0 || action.restorer == 0) continue;
    if (restorers.holds(action.restorer) || restorers.count == Restorers::kMax) continue;
    restorers.address[restorers.count++] = action.restorer;
  }
  return restorers;
}

}  // namespace dprobe::arch
