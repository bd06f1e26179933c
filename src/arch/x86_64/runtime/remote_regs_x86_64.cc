// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include <sys/ptrace.h>

#include "arch/runtime/remote_regs.h"

namespace dprobe::arch {
namespace {

// The kernel's -ERESTART_RESTARTBLOCK.
constexpr long long kRestartRestartBlock = -516;

}  // namespace

bool read_remote_regs(pid_t tid, RemoteRegs& regs) {
  return ::ptrace(PTRACE_GETREGS, tid, nullptr, &regs.gp) == 0 &&
         ::ptrace(PTRACE_GETFPREGS, tid, nullptr, &regs.fp) == 0;
}

bool write_remote_regs(pid_t tid, const RemoteRegs& regs) {
  return ::ptrace(PTRACE_SETREGS, tid, nullptr, &regs.gp) == 0 &&
         ::ptrace(PTRACE_SETFPREGS, tid, nullptr, &regs.fp) == 0;
}

uint64_t remote_pc(const RemoteRegs& regs) { return regs.gp.rip; }
uint64_t remote_sp(const RemoteRegs& regs) { return regs.gp.rsp; }
uint64_t remote_result(const RemoteRegs& regs) { return regs.gp.rax; }
bool in_remote_syscall(const RemoteRegs& regs, std::span<const uint8_t>) {
  return static_cast<long long>(regs.gp.orig_rax) >= 0;
}

bool reissue_stopped_syscall(RemoteRegs& regs) {
  user_regs_struct& gp = regs.gp;
  if (static_cast<long long>(gp.orig_rax) < 0 ||
      static_cast<long long>(gp.rax) != kRestartRestartBlock) {
    return false;
  }
  gp.rax = gp.orig_rax;
  gp.rip -= 2;                                        // back onto the syscall instruction (0f 05)
  gp.orig_rax = static_cast<unsigned long long>(-1);  // no restart of the kernel's on top
  return true;
}

uint64_t set_up_remote_call(RemoteRegs& regs, uint64_t function, std::span<const uint64_t> args,
                            uint64_t stack_top) {
  user_regs_struct& gp = regs.gp;
  gp.rsp = (stack_top & ~uint64_t{15}) - 8;  // as right after a call
  unsigned long long* const slots[] = {&gp.rdi, &gp.rsi, &gp.rdx, &gp.rcx, &gp.r8, &gp.r9};
  for (size_t i = 0; i < args.size() && i < 6; ++i) *slots[i] = args[i];
  gp.rip = function;
  gp.rax = 0;
  gp.orig_rax = static_cast<unsigned long long>(-1);  // a stopped system call is not restarted
  return gp.rsp;
}

}  // namespace dprobe::arch
