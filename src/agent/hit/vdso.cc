// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit/vdso.h"

#include <elf.h>
#include <link.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "arch/runtime/platform.h"
#include "arch/runtime/raw_syscall.h"
#include "base/hit_path.h"

// glibc >= 2.35 registers an rseq area for every thread and exports where.
extern "C" {
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
}

namespace dprobe::agent {
namespace {

using ClockGettime = int (*)(clockid_t, timespec*);
using GetCpu = long (*)(unsigned*, unsigned*, void*);

ClockGettime g_clock_gettime = nullptr;
GetCpu g_getcpu = nullptr;

constexpr const char* kClockName = arch::kVdsoClockGettime;
constexpr const char* kGetCpuName = arch::kVdsoGetcpu;

DPROBE_HIT_PATH bool rseq_registered() { return &__rseq_size != nullptr && __rseq_size > 0; }

}  // namespace

// The vDSO is a tiny ELF image mapped by the kernel: walk its dynamic
// symbol table for a name.
void* vdso_symbol(const char* name) {
  const auto base = getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return nullptr;
  const auto* ehdr = reinterpret_cast<const ElfW(Ehdr)*>(base);
  const auto* phdr = reinterpret_cast<const ElfW(Phdr)*>(base + ehdr->e_phoff);
  uint64_t load_offset = 0;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < ehdr->e_phnum; ++i) {
    if (phdr[i].p_type == PT_LOAD && phdr[i].p_offset == 0) load_offset = base - phdr[i].p_vaddr;
    if (phdr[i].p_type == PT_DYNAMIC)
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + phdr[i].p_offset);
  }
  if (dynamic == nullptr) return nullptr;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* hash = nullptr;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB)
      symtab = reinterpret_cast<const ElfW(Sym)*>(load_offset + d->d_un.d_ptr);
    if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(load_offset + d->d_un.d_ptr);
    if (d->d_tag == DT_HASH) hash = reinterpret_cast<const uint32_t*>(load_offset + d->d_un.d_ptr);
  }
  if (symtab == nullptr || strtab == nullptr || hash == nullptr) return nullptr;
  const uint32_t count = hash[1];  // nchain: one entry per symbol
  for (uint32_t i = 0; i < count; ++i) {
    if (symtab[i].st_shndx == SHN_UNDEF || symtab[i].st_name == 0) continue;
    if (std::strcmp(strtab + symtab[i].st_name, name) == 0) {
      return reinterpret_cast<void*>(load_offset + symtab[i].st_value);
    }
  }
  return nullptr;
}

void init_clock() {
  g_clock_gettime = reinterpret_cast<ClockGettime>(vdso_symbol(kClockName));
  g_getcpu = reinterpret_cast<GetCpu>(vdso_symbol(kGetCpuName));
  if (rseq_registered()) {
    detail::g_rseq_offset = __rseq_offset;
    detail::g_has_rseq = true;
  }
}

trace::ClockKind choose_record_clock(bool cycles_wanted) noexcept {
  bool cycles = cycles_wanted;
  if (arch::kCycleCounterMayBeOff) {
    // A program may have made the counter fault (prctl PR_SET_TSC): then
    // the vDSO's clock, which knows, is the one.
    int tsc_mode = 0;
    if (arch::raw_syscall(SYS_prctl, PR_GET_TSC, arch::raw_arg(&tsc_mode)) != 0 ||
        tsc_mode != PR_TSC_ENABLE) {
      cycles = false;
    }
  }
  g_record_cycles.store(cycles, std::memory_order_relaxed);
  return cycles ? trace::ClockKind::kCycles : trace::ClockKind::kMonotonic;
}

DPROBE_HIT_PATH uint64_t monotonic_ns() noexcept {
  timespec ts{};
  if (g_clock_gettime != nullptr) {
    g_clock_gettime(CLOCK_MONOTONIC, &ts);
  } else {
    arch::raw_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, arch::raw_arg(&ts));  // no vDSO: rare
  }
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

DPROBE_HIT_PATH uint32_t detail::current_cpu_from_vdso() noexcept {
  unsigned cpu = 0;
  if (g_getcpu != nullptr) g_getcpu(&cpu, nullptr, nullptr);
  return cpu;
}

}  // namespace dprobe::agent
