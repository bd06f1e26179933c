// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Memory access that survives bad addresses: the agent's copy_from_user.
// A fetch program follows pointers of the traced program, which may be
// wild; a fault in one of these copies turns into a `false` (or -1) return
// instead of killing the program.
//
// The copy loops are assembly (arch/<isa>/runtime/safe_memory_<isa>.S)
// so that the instructions that may fault lie between known labels, and
// the agent's SIGSEGV/SIGBUS handler can resume them at their failure exit,
// as the kernel does with its exception table:
//
//   void on_fault(int sig, siginfo_t* info, void* ucontext) {
//     // si_code > 0: raised by the kernel for this instruction, not sent
//     // by kill() while a copy happened to run.
//     if (info->si_code > 0 && arch::fixup_memory_fault(ucontext)) return;
//     ...  // not ours: chain to the program's own handler
//   }
//
//   uint64_t word;
//   if (!arch::safe_read(&word, address, sizeof(word))) { /* (fault) */ }
//   char name[64];
//   int64_t length = arch::safe_read_string(name, address, sizeof(name));
//
// The copies call nothing and touch no global state: they run inside a
// signal handler while the program's own code is stopped at a probe.
#ifndef DPROBE_ARCH_RUNTIME_SAFE_MEMORY_H_
#define DPROBE_ARCH_RUNTIME_SAFE_MEMORY_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

#include "arch/runtime/raw_syscall.h"

// The ISA's assembly routines, behind the wrappers below. They take
// addresses as integers because either side may be the traced program's.
extern "C" {
// Copies `size` bytes; 1, or 0 if any byte faulted.
int dprobe_safe_copy(uint64_t dst, uint64_t src, size_t size) noexcept;
// As arch::safe_read_string.
int64_t dprobe_safe_copy_string(uint64_t dst, uint64_t src, size_t capacity) noexcept;
}

namespace dprobe::arch {

// Copies `size` bytes from the address `src`. False if any byte faults;
// `dst` then holds an unspecified prefix.
inline bool safe_read(void* dst, uint64_t src, size_t size) noexcept {
  return dprobe_safe_copy(reinterpret_cast<uintptr_t>(dst), src, size) != 0;
}

// Copies `size` bytes to the address `dst`. False if any byte faults (the
// bytes before the fault are written).
inline bool safe_write(uint64_t dst, const void* src, size_t size) noexcept {
  return dprobe_safe_copy(dst, reinterpret_cast<uintptr_t>(src), size) != 0;
}

// Copies the NUL-terminated string at `src`, at most capacity - 1 bytes and
// then a NUL. Returns the length written with its NUL (1..capacity; 0 for a
// capacity of 0), or -1 if a byte faulted before the end: like the kernel's
// strncpy_from_user, a fault fails the whole string.
inline int64_t safe_read_string(char* dst, uint64_t src, size_t capacity) noexcept {
  return dprobe_safe_copy_string(reinterpret_cast<uintptr_t>(dst), src, capacity);
}

// Copies `size` bytes of this process's memory at `src` through the kernel
// (process_vm_readv): false where a byte is not mapped, and no fault, so
// no signal: for code that may run with every signal blocked.
inline bool kernel_read(void* dst, uint64_t src, size_t size) noexcept {
  const iovec local{dst, size};
  const iovec remote{reinterpret_cast<void*>(src), size};
  return raw_syscall(SYS_process_vm_readv, own_pid(), raw_arg(&local), 1, raw_arg(&remote), 1, 0) ==
         static_cast<long>(size);
}

// For the agent's SIGSEGV and SIGBUS handlers, first thing: if the faulting
// instruction of `ucontext` (a ucontext_t*) is one of the copies above,
// moves the context to that copy's failure exit and returns true; the
// handler then returns and the copy reports the fault. False otherwise: the
// fault is the program's own.
bool fixup_memory_fault(void* ucontext) noexcept;

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_SAFE_MEMORY_H_
