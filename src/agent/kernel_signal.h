// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The kernel's own signal interface, without the C library: the agent's
// signal path runs where every libc function may carry a probe (even
// sigaction() and sigprocmask()), so it speaks to the kernel directly with
// the kernel's structures (struct kernel_sigaction: handler, flags,
// restorer, an 8-byte mask).
#ifndef DPROBE_AGENT_KERNEL_SIGNAL_H_
#define DPROBE_AGENT_KERNEL_SIGNAL_H_

#include <signal.h>

#include <cstdint>
#include <cstring>

#include "agent/signal_action.h"
#include "arch/runtime/raw_syscall.h"

namespace dprobe::agent {

struct KernelSigaction {
  void* handler;
  unsigned long flags;
  void* restorer;
  SignalMask mask;
};

// The kernel's restorer flag (not exported by every libc's headers).
constexpr unsigned long kSaRestorer = 0x04000000;

// The signals the agent holds: its breakpoints' and its fault-safe reads',
// and SIGSYS, which brings it the system calls it traces (Syscall User
// Dispatch): any of them blocked when it comes would kill the process.
constexpr SignalMask kHeld =
    signal_bit(SIGTRAP) | signal_bit(SIGSEGV) | signal_bit(SIGBUS) | signal_bit(SIGSYS);
constexpr int kHeldCount = 4;

inline long kernel_sigaction(int sig, const KernelSigaction* action, KernelSigaction* old) {
  return arch::raw_syscall(SYS_rt_sigaction, sig, arch::raw_arg(action), arch::raw_arg(old),
                           sizeof(SignalMask));
}

inline long kernel_sigmask(int how, const SignalMask* set, SignalMask* old) {
  return arch::raw_syscall(SYS_rt_sigprocmask, how, arch::raw_arg(set), arch::raw_arg(old),
                           sizeof(SignalMask));
}

inline SignalMask kernel_mask_now() {
  SignalMask now = 0;
  kernel_sigmask(SIG_BLOCK, nullptr, &now);
  return now;
}

// The C library's sigset_t begins with the kernel's 64 bits.
inline SignalMask to_kernel_mask(const sigset_t& set) {
  SignalMask mask;
  std::memcpy(&mask, &set, sizeof(mask));
  return mask;
}

inline void set_kernel_mask(sigset_t& set, SignalMask mask) {
  std::memcpy(&set, &mask, sizeof(mask));
}

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_KERNEL_SIGNAL_H_
