// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A ptrace-stopped thread's registers, for the calls `dprobe attach` makes
// inside the traced process (as gdb's `call` does): read and written whole,
// general and floating-point state together, and the few roles a call
// sets. The CLI's only view of the host's registers.
//
//   RemoteRegs saved;  read_remote_regs(tid, saved);
//   RemoteRegs regs = saved;
//   const uint64_t ra_slot = set_up_remote_call(regs, function, args, stack_top);
//   ... write a zero return address at ra_slot (if not 0), run, wait for
//   the fault at pc 0, read remote_result(), write `saved` back.
#ifndef DPROBE_ARCH_RUNTIME_REMOTE_REGS_H_
#define DPROBE_ARCH_RUNTIME_REMOTE_REGS_H_

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <span>

namespace dprobe::arch {

#if defined(__x86_64__)
struct RemoteRegs {
  user_regs_struct gp;
  user_fpregs_struct fp;
};
#elif defined(__aarch64__)
struct RemoteRegs {
  user_regs_struct gp;
  user_fpsimd_struct fp;
  int syscall_nr;  // NT_ARM_SYSTEM_CALL: -1 outside a system call
};
#else
#error "no remote registers for this architecture"
#endif

bool read_remote_regs(pid_t tid, RemoteRegs& regs);
bool write_remote_regs(pid_t tid, const RemoteRegs& regs);

uint64_t remote_pc(const RemoteRegs& regs);
uint64_t remote_sp(const RemoteRegs& regs);
uint64_t remote_result(const RemoteRegs& regs);
// Whether the thread stopped inside a system call (which it would restart).
// `at_pc` holds the bytes at the stopped pc (4, read by the caller; empty
// when unreadable): x86_64 tells by orig_ax, but at a ptrace stop arm64's
// signal path has already forgotten the call and rewound a restartable one
// onto its svc, which is what tells there.
bool in_remote_syscall(const RemoteRegs& regs, std::span<const uint8_t> at_pc);

// A system call stopped with the kernel's -ERESTART_RESTARTBLOCK (nanosleep,
// poll, futex with a timeout) continues through restart_syscall and the
// thread's restart block; the remote calls run the agent's signal handlers,
// whose sigreturns reset that block, so the restart would return EINTR,
// which the program never asked for. This makes the thread issue the call
// again instead, as the kernel does for the other -ERESTART codes. Whether
// it changed `regs`.
bool reissue_stopped_syscall(RemoteRegs& regs);

// Sets `regs` up for a call of `function` with up to six integer `args`,
// its stack below `stack_top` (16-byte aligned), returning to address 0
// (the fault there ends the call), with no system call restart on top.
// Returns the stack address where a zero return address must be written
// first, or 0 when the return address is a register.
uint64_t set_up_remote_call(RemoteRegs& regs, uint64_t function, std::span<const uint64_t> args,
                            uint64_t stack_top);

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_REMOTE_REGS_H_
