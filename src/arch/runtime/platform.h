// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Small facts of the host's ABI that the agent needs by name, in one place
// (the kernel's asm/ headers): the vDSO's symbol names, the dynamic
// relocations of a PLT and a GOT entry, the thread pointer, a spin-wait
// hint, whether sigaction needs an SA_RESTORER, whether the cycle
// counter may be switched off for a process, and how an IFUNC resolver is
// called.
#ifndef DPROBE_ARCH_RUNTIME_PLATFORM_H_
#define DPROBE_ARCH_RUNTIME_PLATFORM_H_

#include <elf.h>
#include <sys/auxv.h>

#include <cstdint>

namespace dprobe::arch {

#if defined(__x86_64__)

inline constexpr const char* kVdsoClockGettime = "__vdso_clock_gettime";
inline constexpr const char* kVdsoGetcpu = "__vdso_getcpu";
inline constexpr uint32_t kJumpSlotReloc = R_X86_64_JUMP_SLOT;
inline constexpr uint32_t kGlobDatReloc = R_X86_64_GLOB_DAT;
// The kernel refuses a handler without a restorer on x86_64.
inline constexpr bool kSigactionNeedsRestorer = true;
// The vDSO's signal return trampoline, which no probe may touch: none on
// x86_64 (the C library's restorer is the one there).
inline constexpr const char* kVdsoSigreturn = nullptr;
// rdtsc can be made to fault (prctl PR_SET_TSC, as record-and-replay
// tools do): then it must not be read.
inline constexpr bool kCycleCounterMayBeOff = true;

inline const char* thread_pointer() noexcept {
  const char* tp;
  asm("mov %%fs:0, %0" : "=r"(tp));  // the TCB's pointer to itself
  return tp;
}

inline void cpu_relax() noexcept { __builtin_ia32_pause(); }

// The kernel's MINSIGSTKSZ: the smallest signal stack sigaltstack takes
// (the C library's macro may be a sysconf call, which no handler makes).
inline constexpr uint64_t kMinSignalStackBytes = 2048;

// The C library's thread descriptor (glibc's struct pthread) from the
// thread pointer: on x86_64 the pointer is the descriptor.
inline const char* thread_descriptor(const char* tp, uint32_t) noexcept { return tp; }

// The clone gadgets of syscall_gadgets_x86_64.S: `syscall; int3; nop`,
// and where the int3's trap leaves the pc.
inline constexpr uint64_t kCloneGadgetStride = 4;
inline constexpr uint64_t kCloneGadgetTrapOffset = 3;

// The implementation an IFUNC resolver picks, asked as the dynamic loader
// asks it: on x86_64 with no arguments (the resolver reads the CPU's
// features the loader recorded).
inline uint64_t call_ifunc_resolver(uint64_t resolver) noexcept {
  using Resolver = uint64_t (*)();
  return reinterpret_cast<Resolver>(resolver)();
}

#elif defined(__aarch64__)

inline constexpr const char* kVdsoClockGettime = "__kernel_clock_gettime";
inline constexpr const char* kVdsoGetcpu = "__kernel_getcpu";
inline constexpr uint32_t kJumpSlotReloc = R_AARCH64_JUMP_SLOT;
inline constexpr uint32_t kGlobDatReloc = R_AARCH64_GLOB_DAT;
inline constexpr bool kSigactionNeedsRestorer = false;  // the vDSO's sigreturn
inline constexpr const char* kVdsoSigreturn = "__kernel_rt_sigreturn";
inline constexpr bool kCycleCounterMayBeOff = false;

inline const char* thread_pointer() noexcept {
  const char* tp;
  asm("mrs %0, tpidr_el0" : "=r"(tp));
  return tp;
}

inline void cpu_relax() noexcept { asm volatile("yield"); }

// The kernel's MINSIGSTKSZ: the smallest signal stack sigaltstack takes.
inline constexpr uint64_t kMinSignalStackBytes = 5120;

// The C library's thread descriptor (glibc's struct pthread) from the
// thread pointer: on arm64 the descriptor lies just below it.
inline const char* thread_descriptor(const char* tp, uint32_t descriptor_size) noexcept {
  return tp - descriptor_size;
}

// syscall_gadgets_arm64.S: `svc #0; brk`, whose trap reports the brk.
inline constexpr uint64_t kCloneGadgetStride = 8;
inline constexpr uint64_t kCloneGadgetTrapOffset = 4;

// The implementation an IFUNC resolver picks, asked as the dynamic loader
// asks it: on arm64 with AT_HWCAP (flagged as followed by the argument
// block) and the block {its size, AT_HWCAP, AT_HWCAP2}.
inline uint64_t call_ifunc_resolver(uint64_t resolver) noexcept {
  constexpr uint64_t kIfuncArgFollows = uint64_t{1} << 62;  // _IFUNC_ARG_HWCAP
  struct Args {
    uint64_t size;
    uint64_t hwcap;
    uint64_t hwcap2;
  };
  const Args args{sizeof(Args), ::getauxval(AT_HWCAP), ::getauxval(AT_HWCAP2)};
  using Resolver = uint64_t (*)(uint64_t, const Args*);
  return reinterpret_cast<Resolver>(resolver)(args.hwcap | kIfuncArgFollows, &args);
}

#else
#error "no platform facts for this architecture"
#endif

}  // namespace dprobe::arch

#endif  // DPROBE_ARCH_RUNTIME_PLATFORM_H_
