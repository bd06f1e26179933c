// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/unsafe_code.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <array>

#include "agent/loaded_objects.h"
#include "agent/signals.h"

namespace dprobe::agent {
namespace {

// glibc (2.36) calls these with all signals blocked. Aliases share the
// address, so one name covers them all (__clone, _Exit).
constexpr std::array kBlockedSignalFunctions = {
    // A new thread, before it restores its mask.
    "clone",
    "__ctype_init",
    "_setjmp",
    "__sigsetjmp",
    // An exiting thread, after blocking everything: its stack goes back.
    "getpagesize",
    "madvise",
    "munmap",
    "__lll_lock_wait_private",
    // posix_spawn's child (system, popen), which also shares the parent's
    // memory until it execs.
    "__libc_sigaction",
    "setsid",
    "setpgid",
    "sched_setparam",
    "sched_setscheduler",
    "dup2",
    "chdir",
    "fchdir",
    "close_range",
    "_exit",
};
// The loader frees an exiting thread's TLS with everything blocked.
constexpr std::array kBlockedSignalLoaderFunctions = {"_dl_deallocate_tls"};

constexpr const char* kBlockedReason =
    "the C library runs it with every signal blocked (thread start and exit, "
    "posix_spawn's child): a breakpoint there would kill the process";

void blacklist_function(core::ProbeRegistry& registry, void* library, const char* name) {
  void* address = ::dlsym(library, name);
  if (address == nullptr) return;  // not in this C library
  Dl_info info;
  void* entry = nullptr;  // the symbol's ElfW(Sym)
  if (::dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return;
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  const auto begin = reinterpret_cast<uint64_t>(address);
  registry.blacklist(begin, begin + (symbol->st_size ? symbol->st_size : 1), kBlockedReason);
}

}  // namespace

void blacklist_unsafe_code(core::ProbeRegistry& registry) {
  const TextRange self = text_range_of(reinterpret_cast<const void*>(&blacklist_unsafe_code));
  registry.blacklist(self.begin, self.end, "the dprobe agent's own code");
  if (const uint64_t restorer = signal_restorer_address(); restorer != 0) {
    registry.blacklist(restorer, restorer + 16, "the signal return trampoline");
  }
  void* libc = ::dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc == nullptr) return;  // a C library other than glibc
  for (const char* name : kBlockedSignalFunctions) blacklist_function(registry, libc, name);
  ::dlclose(libc);  // only drops the reference RTLD_NOLOAD took
  for (const char* name : kBlockedSignalLoaderFunctions) {
    blacklist_function(registry, RTLD_DEFAULT, name);
  }
}

}  // namespace dprobe::agent
