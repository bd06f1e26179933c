// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "syscalls/syscall_table.h"

#include <algorithm>

#include "base/strings.h"

namespace dprobe::syscalls {
namespace {

constexpr SyscallInfo kX86_64[] = {
#include "data/syscalls/x86_64.inc"
};

// syscall_by_nr's binary search needs it; a hand edit of the generated
// file that breaks it stops the build.
constexpr bool sorted_and_unique(std::span<const SyscallInfo> table) {
  for (size_t i = 1; i < table.size(); ++i) {
    if (table[i - 1].nr >= table[i].nr) return false;
  }
  return true;
}
static_assert(sorted_and_unique(kX86_64));

}  // namespace

std::span<const SyscallInfo> syscall_table(arch::Isa isa) {
  if (isa == arch::Isa::kX86_64) return kX86_64;
  return {};
}

// A few hundred names, looked up when a probe is defined: a scan is enough.
const SyscallInfo* find_syscall(arch::Isa isa, std::string_view name) {
  for (const SyscallInfo& info : syscall_table(isa)) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const SyscallInfo* syscall_by_nr(arch::Isa isa, long nr) {
  const std::span<const SyscallInfo> table = syscall_table(isa);
  const auto it = std::lower_bound(table.begin(), table.end(), nr,
                                   [](const SyscallInfo& info, long n) { return info.nr < n; });
  if (it == table.end() || it->nr != nr) return nullptr;
  return &*it;
}

std::vector<const SyscallInfo*> match_syscalls(arch::Isa isa, std::string_view glob) {
  std::vector<const SyscallInfo*> matches;
  for (const SyscallInfo& info : syscall_table(isa)) {
    if (glob_match(glob, info.name)) matches.push_back(&info);
  }
  return matches;
}

}  // namespace dprobe::syscalls
