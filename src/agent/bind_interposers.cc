// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/bind_interposers.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include <array>
#include <atomic>
#include <cstring>

#include "agent/agent.h"
#include "arch/runtime/platform.h"

namespace dprobe::agent {
namespace {

// What interpose.cc, exec.cc and descriptors.cc export.
constexpr std::array kInterposed = {
    "sigaction",       "signal",       "sigprocmask",
    "pthread_sigmask", "prctl",        "pthread_setname_np",
    "backtrace",       "execve",       "execv",
    "execvp",          "execvpe",      "execl",
    "execlp",          "execle",       "fexecve",
    "execveat",        "close",        "close_range",
    "closefrom",       "dup2",         "dup3",
    "sigpending",      "sigtimedwait", "sigwaitinfo",
    "sigwait",         "sigsuspend",   "sigaltstack",
    "syscall",
};

constexpr uint32_t kJumpSlot = arch::kJumpSlotReloc;
constexpr uint32_t kGlobDat = arch::kGlobDatReloc;

std::atomic<bool> g_loaded_late{false};

struct Binding {
  std::array<void*, kInterposed.size()> ours{};
  uint64_t agent_base = 0;
};

struct Relro {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// One GOT entry, in one store: other threads may be calling through it.
// An entry in the object's RELRO pages is read-only by now: its page is
// made writable for the store, then read-only again. (The loader protects
// the whole pages of RELRO only: a last partial page stays writable.)
void write_pointer(uint64_t address, void* value, const Relro& relro) {
  auto* entry = reinterpret_cast<void**>(address);
  if (__atomic_load_n(entry, __ATOMIC_RELAXED) == value) return;
  const uint64_t page = address & ~uint64_t{4095};
  const bool read_only = page >= (relro.begin & ~uint64_t{4095}) && page + 4096 <= relro.end;
  if (read_only && ::mprotect(reinterpret_cast<void*>(page), 4096, PROT_READ | PROT_WRITE) != 0) {
    return;
  }
  __atomic_store_n(entry, value, __ATOMIC_RELEASE);
  if (read_only) ::mprotect(reinterpret_cast<void*>(page), 4096, PROT_READ);
}

// The loader relocates the pointers of a dynamic section in place on these
// ISAs, except in objects it did not load itself (the vDSO).
uint64_t dynamic_pointer(const ElfW(Dyn) & entry, uint64_t base) {
  return entry.d_un.d_ptr < base ? entry.d_un.d_ptr + base : entry.d_un.d_ptr;
}

struct DynamicTables {
  const ElfW(Sym) * symbols = nullptr;
  const char* strings = nullptr;
  const ElfW(Rela) * plt = nullptr;
  size_t plt_bytes = 0;
  const ElfW(Rela) * rela = nullptr;
  size_t rela_bytes = 0;
};

DynamicTables tables_of(const ElfW(Dyn) * dynamic, uint64_t base) {
  DynamicTables t;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        t.symbols = reinterpret_cast<const ElfW(Sym)*>(dynamic_pointer(*d, base));
        break;
      case DT_STRTAB:
        t.strings = reinterpret_cast<const char*>(dynamic_pointer(*d, base));
        break;
      case DT_JMPREL:
        t.plt = reinterpret_cast<const ElfW(Rela)*>(dynamic_pointer(*d, base));
        break;
      case DT_PLTRELSZ:
        t.plt_bytes = d->d_un.d_val;
        break;
      case DT_RELA:
        t.rela = reinterpret_cast<const ElfW(Rela)*>(dynamic_pointer(*d, base));
        break;
      case DT_RELASZ:
        t.rela_bytes = d->d_un.d_val;
        break;
      default:
        break;
    }
  }
  return t;
}

void bind_relocations(const ElfW(Rela) * begin, size_t bytes, const DynamicTables& t, uint64_t base,
                      const Relro& relro, const Binding& binding) {
  if (begin == nullptr) return;
  for (const ElfW(Rela)* r = begin; r < begin + bytes / sizeof(ElfW(Rela)); ++r) {
    const uint32_t type = ELF64_R_TYPE(r->r_info);
    if (type != kJumpSlot && type != kGlobDat) continue;
    const char* name = t.strings + t.symbols[ELF64_R_SYM(r->r_info)].st_name;
    for (size_t i = 0; i < kInterposed.size(); ++i) {
      if (binding.ours[i] == nullptr || std::strcmp(name, kInterposed[i]) != 0) continue;
      write_pointer(base + r->r_offset, binding.ours[i], relro);
    }
  }
}

int bind_object(dl_phdr_info* info, size_t, void* data) {
  const auto& binding = *static_cast<const Binding*>(data);
  const uint64_t base = info->dlpi_addr;
  if (base == binding.agent_base) return 0;  // the agent calls the real ones by dlsym
  Relro relro;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type == PT_GNU_RELRO) {
      relro = {base + segment.p_vaddr, base + segment.p_vaddr + segment.p_memsz};
    } else if (segment.p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + segment.p_vaddr);
    }
  }
  if (dynamic == nullptr) return 0;
  const DynamicTables t = tables_of(dynamic, base);
  if (t.symbols == nullptr || t.strings == nullptr) return 0;
  bind_relocations(t.plt, t.plt_bytes, t, base, relro, binding);
  bind_relocations(t.rela, t.rela_bytes, t, base, relro, binding);
  return 0;
}

}  // namespace

bool loaded_late() { return g_loaded_late.load(); }
void set_loaded_late() { g_loaded_late.store(true); }

void bind_interposers() {
  void* self = ::dlopen(agent_path().c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (self == nullptr) return;
  Binding binding;
  for (size_t i = 0; i < kInterposed.size(); ++i) binding.ours[i] = ::dlsym(self, kInterposed[i]);
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&bind_interposers), &info) != 0) {
    binding.agent_base = reinterpret_cast<uint64_t>(info.dli_fbase);
  }
  ::dlclose(self);
  ::dl_iterate_phdr(bind_object, &binding);
}

}  // namespace dprobe::agent
