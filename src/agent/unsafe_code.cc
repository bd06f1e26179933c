// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/unsafe_code.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>

#include <array>
#include <utility>
#include <vector>

#include "agent/hit/vdso.h"
#include "agent/loaded_objects.h"
#include "agent/signals.h"
#include "arch/runtime/platform.h"

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
    // raise(), abort() and pthread_kill() on the calling thread, between
    // blocking everything and sending the signal.
    "getpid",
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

// Functions that can tell their return address was swapped (glibc 2.36).
constexpr std::array kReturnsTwiceFunctions = {
    "setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "getcontext", "swapcontext", "vfork",
};
constexpr std::array kCallerSensitiveFunctions = {
    "dlopen", "dlmopen", "dlsym", "dlvsym", "dl_iterate_phdr",
};

constexpr const char* kReturnsTwiceReason =
    "it returns twice (setjmp, vfork, getcontext): a return probe there would "
    "send the second return to a stub whose instance is gone";
constexpr const char* kCallerSensitiveReason =
    "it acts on behalf of its caller, found by its return address (dlopen, "
    "dlsym with RTLD_NEXT): a return probe there would change what it does";

struct RefusedRange {
  uint64_t begin;
  uint64_t end;
  const char* reason;
};
// Set once with the blacklist, read under the registry's writer lock.
std::vector<RefusedRange> g_return_refused;

constexpr const char* kBlockedReason =
    "the C library runs it with every signal blocked (thread start and exit, "
    "posix_spawn's child): a breakpoint there would kill the process";

// The [begin, end) of a function of `library`, or {0, 0} if it has none.
std::pair<uint64_t, uint64_t> function_range(void* library, const char* name) {
  void* address = ::dlsym(library, name);
  if (address == nullptr) return {0, 0};  // not in this C library
  Dl_info info;
  void* entry = nullptr;  // the symbol's ElfW(Sym)
  if (::dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return {0, 0};
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  const auto begin = reinterpret_cast<uint64_t>(address);
  return {begin, begin + (symbol->st_size ? symbol->st_size : 1)};
}

// No breakpoint; a jump written while no other thread runs is fine.
void blacklist_function(core::ProbeRegistry& registry, void* library, const char* name) {
  if (const auto [begin, end] = function_range(library, name); begin != 0) {
    registry.blacklist(begin, end, kBlockedReason, /*as_jump=*/true);
  }
}

void refuse_return_probes(void* library, const char* name, const char* reason) {
  if (const auto [begin, end] = function_range(library, name); begin != 0) {
    g_return_refused.push_back({begin, end, reason});
  }
}

constexpr const char* kEntryPointReason =
    "an entry point: the kernel jumps to it, nothing calls it, so its stack "
    "holds the program's arguments where a return address would be";

// The program's and the dynamic loader's entry points (_start), where the
// kernel starts the process: a return probe there would overwrite argc.
void refuse_return_probes_at_entry_points() {
  const uint64_t program_entry = ::getauxval(AT_ENTRY);
  if (program_entry != 0)
    g_return_refused.push_back({program_entry, program_entry + 1, kEntryPointReason});
  const uint64_t loader = ::getauxval(AT_BASE);
  if (loader == 0) return;  // a static program: no loader
  const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(loader);
  const uint64_t loader_entry = loader + header->e_entry;
  g_return_refused.push_back({loader_entry, loader_entry + 1, kEntryPointReason});
}

}  // namespace

void blacklist_unsafe_code(core::ProbeRegistry& registry) {
  const TextRange self = text_range_of(reinterpret_cast<const void*>(&blacklist_unsafe_code));
  registry.blacklist(self.begin, self.end, "the dprobe agent's own code");
  if (const uint64_t restorer = signal_restorer_address(); restorer != 0) {
    registry.blacklist(restorer, restorer + 16, "the signal return trampoline");
  }
  if (arch::kVdsoSigreturn != nullptr) {
    if (void* trampoline = vdso_symbol(arch::kVdsoSigreturn)) {
      const auto begin = reinterpret_cast<uint64_t>(trampoline);
      registry.blacklist(begin, begin + 16, "the vDSO's signal return trampoline");
    }
  }
  refuse_return_probes_at_entry_points();
  void* libc = ::dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc == nullptr) return;  // a C library other than glibc
  for (const char* name : kBlockedSignalFunctions) blacklist_function(registry, libc, name);
  for (const char* name : kReturnsTwiceFunctions) {
    refuse_return_probes(libc, name, kReturnsTwiceReason);
  }
  for (const char* name : kCallerSensitiveFunctions) {
    refuse_return_probes(libc, name, kCallerSensitiveReason);
  }
  ::dlclose(libc);  // only drops the reference RTLD_NOLOAD took
  for (const char* name : kBlockedSignalLoaderFunctions) {
    blacklist_function(registry, RTLD_DEFAULT, name);
  }
}

const char* return_probe_refusal(uint64_t function_address) {
  for (const RefusedRange& range : g_return_refused) {
    if (function_address >= range.begin && function_address < range.end) return range.reason;
  }
  return nullptr;
}

}  // namespace dprobe::agent
