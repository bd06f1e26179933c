// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// System calls without the C library. The agent runs inside the traced
// program, where every function of libc may carry a probe: libc's
// syscall(), getpid() or sigaction() called from a trap handler or from the
// agent's own bookkeeping would hit those probes (and a return probe on
// them would hijack the agent's own frames). These wrappers are the
// `syscall` instruction itself, inlined into the caller.
//
//   long tid = arch::raw_syscall(SYS_gettid);
//   if (arch::raw_failed(tid)) ...   // -errno in [-4095, -1], as the kernel returns
#ifndef DPROBE_ARCH_RUNTIME_RAW_SYSCALL_H_
#define DPROBE_ARCH_RUNTIME_RAW_SYSCALL_H_

#include <sys/syscall.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace dprobe::arch {

#if defined(__x86_64__)

// The kernel's x86_64 convention: number in rax, arguments in rdi, rsi,
// rdx, r10, r8, r9; rcx and r11 are clobbered by the instruction.
inline long raw_syscall(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0,
                        long f = 0) noexcept {
  long result;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return result;
}

#elif defined(__aarch64__)

// The kernel's arm64 convention: number in x8, arguments and result in x0..x5.
inline long raw_syscall(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0,
                        long f = 0) noexcept {
  register long x8 __asm__("x8") = nr;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc #0"
                   : "+r"(x0)
                   : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                   : "memory");
  return x0;
}

#else
#error "raw_syscall: unsupported ISA"
#endif

// A pointer argument, as the kernel takes it.
inline long raw_arg(const void* pointer) noexcept { return reinterpret_cast<long>(pointer); }

// A raw result is an error when it lies in the kernel's -errno range.
inline bool raw_failed(long result) noexcept { return result < 0 && result >= -4095; }

inline uint32_t raw_gettid() noexcept { return static_cast<uint32_t>(raw_syscall(SYS_gettid)); }
inline uint32_t raw_getpid() noexcept { return static_cast<uint32_t>(raw_syscall(SYS_getpid)); }

// The process's id as the agent noted it (at start, and in a forked
// child), or 0. A program's seccomp filter may trap getpid, as sandboxes
// do: the agent's code that runs on the program's threads (its signal
// handlers, its interposers) asks own_pid(), never the kernel.
inline std::atomic<uint32_t> g_noted_pid{0};
inline void note_own_pid() noexcept { g_noted_pid.store(raw_getpid(), std::memory_order_relaxed); }
inline uint32_t own_pid() noexcept {
  const uint32_t noted = g_noted_pid.load(std::memory_order_relaxed);
  return noted != 0 ? noted : raw_getpid();
}

// Whether thread `tid` of process `pid` still runs (a signal 0 finds it).
inline bool raw_thread_alive(uint32_t pid, uint32_t tid) noexcept {
  return raw_syscall(SYS_tgkill, pid, tid, 0) != -ESRCH;
}

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_RAW_SYSCALL_H_
