// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/text_patcher.h"

#include <errno.h>
#include <fcntl.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace dprobe::core {
namespace {

std::string failure(const char* what, uint64_t address, long error) {
  char text[64];
  std::snprintf(text, sizeof(text), " at 0x%llx: ", static_cast<unsigned long long>(address));
  return std::string(what) + text + std::strerror(error < 0 ? static_cast<int>(-error) : EIO);
}

// Raw system calls: the C library's open and pwrite may carry probes.
long open_self_mem() {
  return arch::raw_syscall(SYS_openat, AT_FDCWD, arch::raw_arg("/proc/thread-self/mem"),
                           O_RDWR | O_CLOEXEC);
}

Result<void> open_into(arch::AgentDescriptor& mem) {
  const long fd = open_self_mem();
  if (arch::raw_failed(fd)) {
    return fail(std::string("/proc/self/mem: ") + std::strerror(static_cast<int>(-fd)));
  }
  if (!mem.adopt(static_cast<int>(fd))) return fail("/proc/self/mem: no descriptor left for it");
  return {};
}

}  // namespace

Result<TextPatcher> TextPatcher::open() {
  auto mem = std::make_unique<arch::AgentDescriptor>();
  if (auto opened = open_into(*mem); !opened) return unexpected(opened.error());
  return TextPatcher(std::move(mem));
}

Result<void> TextPatcher::reopen() {
  if (!mem_) return fail("/proc/self/mem: the patcher was moved from");
  mem_->close();  // in a forked child: the inherited one, which writes the parent
  return open_into(*mem_);
}

TextPatcher::~TextPatcher() {
  if (mem_) mem_->close();
}

// The program may have closed the number (a raw close_range passes the
// interposers by) and opened a file of its own there: text bytes must
// never land in it.
Result<int> TextPatcher::usable() const {
  if (!mem_) return fail("/proc/self/mem: the patcher was moved from");
  if (!mem_->intact()) {
    mem_->release();  // the number is the program's now: not ours to close
    if (auto opened = open_into(*mem_); !opened) return unexpected(opened.error());
  }
  return mem_->fd();
}

Result<void> TextPatcher::write(uint64_t address, std::span<const uint8_t> bytes) const {
  auto fd = usable();
  if (!fd) return unexpected(fd.error());
  const long n = arch::raw_syscall(SYS_pwrite64, *fd, arch::raw_arg(bytes.data()),
                                   static_cast<long>(bytes.size()), static_cast<long>(address));
  if (n != static_cast<long>(bytes.size())) return fail(failure("writing code", address, n));
  // The kernel's write through /proc/self/mem cleans the data cache and
  // invalidates the instruction cache for the page (copy_to_user_page);
  // this is the user-space maintenance arm64 asks for on top, on the very
  // range (nothing on x86_64, whose caches are coherent).
  auto* begin = reinterpret_cast<char*>(address);
  __builtin___clear_cache(begin, begin + bytes.size());
  return {};
}

Result<void> TextPatcher::read(uint64_t address, std::span<uint8_t> bytes) const {
  auto fd = usable();
  if (!fd) return unexpected(fd.error());
  const long n = arch::raw_syscall(SYS_pread64, *fd, arch::raw_arg(bytes.data()),
                                   static_cast<long>(bytes.size()), static_cast<long>(address));
  if (n != static_cast<long>(bytes.size())) return fail(failure("reading code", address, n));
  return {};
}

}  // namespace dprobe::core
