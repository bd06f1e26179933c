// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/bind_interposers.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <array>
#include <atomic>
#include <cstring>

#include "agent/agent.h"
#include "core/text_patcher.h"

namespace dprobe::agent {
namespace {

// What interpose.cc and exec.cc export.
constexpr std::array kInterposed = {
    "sigaction", "signal", "sigprocmask", "pthread_sigmask", "prctl",   "pthread_setname_np",
    "backtrace", "execve", "execv",       "execvp",          "execvpe", "execl",
    "execlp",    "execle", "fexecve",     "execveat",
};

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#endif

std::atomic<bool> g_loaded_late{false};

struct Binding {
  std::array<void*, kInterposed.size()> ours{};
  uint64_t agent_base = 0;
  const core::TextPatcher* patcher = nullptr;
};

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
                      const Binding& binding) {
  if (begin == nullptr) return;
  for (const ElfW(Rela)* r = begin; r < begin + bytes / sizeof(ElfW(Rela)); ++r) {
    const uint32_t type = ELF64_R_TYPE(r->r_info);
    if (type != kJumpSlot && type != kGlobDat) continue;
    const char* name = t.strings + t.symbols[ELF64_R_SYM(r->r_info)].st_name;
    for (size_t i = 0; i < kInterposed.size(); ++i) {
      if (binding.ours[i] == nullptr || std::strcmp(name, kInterposed[i]) != 0) continue;
      const auto value = reinterpret_cast<uint64_t>(binding.ours[i]);
      const uint8_t* bytes_of = reinterpret_cast<const uint8_t*>(&value);
      // Through /proc/self/mem: RELRO pages are read-only by now.
      (void)binding.patcher->write(base + r->r_offset, {bytes_of, sizeof(value)});
    }
  }
}

int bind_object(dl_phdr_info* info, size_t, void* data) {
  const auto& binding = *static_cast<const Binding*>(data);
  const uint64_t base = info->dlpi_addr;
  if (base == binding.agent_base) return 0;  // the agent calls the real ones by dlsym
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    const auto* dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + info->dlpi_phdr[i].p_vaddr);
    const DynamicTables t = tables_of(dynamic, base);
    if (t.symbols == nullptr || t.strings == nullptr) return 0;
    bind_relocations(t.plt, t.plt_bytes, t, base, binding);
    bind_relocations(t.rela, t.rela_bytes, t, base, binding);
  }
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
  auto patcher = core::TextPatcher::open();
  if (!patcher) return;
  binding.patcher = &*patcher;
  ::dl_iterate_phdr(bind_object, &binding);
}

}  // namespace dprobe::agent
