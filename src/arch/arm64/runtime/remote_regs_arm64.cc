// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// arm64's registers through PTRACE_GETREGSET: NT_PRSTATUS (x0..x30, sp,
// pc, pstate), NT_PRFPREG (the vector registers, fpsr, fpcr) and
// NT_ARM_SYSTEM_CALL (the number of the system call the thread stopped
// in, -1 for none).
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include <algorithm>
#include <iterator>

#include "arch/runtime/remote_regs.h"

namespace dprobe::arch {
namespace {

template <typename T>
bool get_set(pid_t tid, int set, T& value) {
  iovec io{&value, sizeof(value)};
  return ::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(static_cast<long>(set)), &io) ==
             0 &&
         io.iov_len == sizeof(value);
}

template <typename T>
bool set_set(pid_t tid, int set, const T& value) {
  iovec io{const_cast<T*>(&value), sizeof(value)};
  return ::ptrace(PTRACE_SETREGSET, tid, reinterpret_cast<void*>(static_cast<long>(set)), &io) == 0;
}

}  // namespace

bool read_remote_regs(pid_t tid, RemoteRegs& regs) {
  return get_set(tid, NT_PRSTATUS, regs.gp) && get_set(tid, NT_PRFPREG, regs.fp) &&
         get_set(tid, NT_ARM_SYSTEM_CALL, regs.syscall_nr);
}

bool write_remote_regs(pid_t tid, const RemoteRegs& regs) {
  return set_set(tid, NT_PRSTATUS, regs.gp) && set_set(tid, NT_PRFPREG, regs.fp) &&
         set_set(tid, NT_ARM_SYSTEM_CALL, regs.syscall_nr);
}

uint64_t remote_pc(const RemoteRegs& regs) { return regs.gp.pc; }
uint64_t remote_sp(const RemoteRegs& regs) { return regs.gp.sp; }
uint64_t remote_result(const RemoteRegs& regs) { return regs.gp.regs[0]; }
// At a ptrace stop arm64's signal path has already forgotten the call
// (NT_ARM_SYSTEM_CALL reads -1) and, for one it restarts (a blocking
// read, nanosleep, a futex wait: -ERESTART*), put the pc back on the svc.
// So a thread stopped on an `svc #0` was blocked in that call.
bool in_remote_syscall(const RemoteRegs& regs, std::span<const uint8_t> at_pc) {
  constexpr uint8_t kSvc0[] = {0x01, 0x00, 0x00, 0xd4};  // svc #0
  return regs.syscall_nr >= 0 || (at_pc.size() >= sizeof(kSvc0) &&
                                  std::equal(std::begin(kSvc0), std::end(kSvc0), at_pc.begin()));
}

// Nothing to do: at a ptrace stop arm64's signal path has already put the
// pc back on the svc and x0 back to the call's first argument, so writing
// the saved registers back makes the call again.
bool reissue_stopped_syscall(RemoteRegs&) { return false; }

uint64_t set_up_remote_call(RemoteRegs& regs, uint64_t function, std::span<const uint64_t> args,
                            uint64_t stack_top) {
  for (size_t i = 0; i < args.size() && i < 8; ++i) regs.gp.regs[i] = args[i];
  regs.gp.sp = stack_top & ~uint64_t{15};
  regs.gp.pc = function;
  regs.gp.regs[30] = 0;  // the link register: the call returns to address 0
  regs.syscall_nr = -1;  // a stopped system call is not restarted
  return 0;
}

}  // namespace dprobe::arch
