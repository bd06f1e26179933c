// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/text_patcher.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace dprobe::core {
namespace {

std::string failure(const char* what, uint64_t address) {
  char text[64];
  std::snprintf(text, sizeof(text), " at 0x%llx: ", static_cast<unsigned long long>(address));
  return std::string(what) + text + std::strerror(errno);
}

}  // namespace

Result<TextPatcher> TextPatcher::open() {
  const int fd = ::open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  if (fd < 0) return fail(std::string("/proc/self/mem: ") + std::strerror(errno));
  return TextPatcher(fd);
}

Result<void> TextPatcher::reopen() {
  auto fresh = open();
  if (!fresh) return unexpected(fresh.error());
  if (fd_ >= 0) ::close(fd_);
  fd_ = fresh->fd_;
  fresh->fd_ = -1;
  return {};
}

TextPatcher::~TextPatcher() {
  if (fd_ >= 0) ::close(fd_);
}

Result<void> TextPatcher::write(uint64_t address, std::span<const uint8_t> bytes) const {
  const ssize_t n = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(address));
  if (n != static_cast<ssize_t>(bytes.size())) return fail(failure("writing code", address));
  return {};
}

Result<void> TextPatcher::read(uint64_t address, std::span<uint8_t> bytes) const {
  const ssize_t n = ::pread(fd_, bytes.data(), bytes.size(), static_cast<off_t>(address));
  if (n != static_cast<ssize_t>(bytes.size())) return fail(failure("reading code", address));
  return {};
}

}  // namespace dprobe::core
