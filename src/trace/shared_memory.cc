// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "trace/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

#include "arch/runtime/agent_descriptors.h"

namespace dprobe::trace {
namespace {

// std::strerror shares one buffer between threads; the category's message
// does not.
Unexpected<Error> fail_errno(std::string what) {
  const int err = errno;
  return fail(what + ": " + std::generic_category().message(err));
}

// The memory is shared with a process that may be hostile or just wild: it
// can never be shrunk under a mapping (a read past its end would be a
// SIGBUS in the reader), nor unsealed.
constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_SEAL;

Result<void*> map_shared(int fd, size_t bytes) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) return fail_errno("mmap of " + std::to_string(bytes) + " bytes");
  return data;
}

}  // namespace

Result<SharedMemory> SharedMemory::create(std::string_view name, size_t bytes) {
  if (bytes == 0) return fail("shared memory of 0 bytes");
  const std::string label(name);  // memfd_create wants a NUL-terminated name
  // High, out of the way of a program that closes or reuses every low
  // number (the agent creates its trace memory while the program runs).
  const int fd = arch::move_high(memfd_create(label.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd < 0) return fail_errno("memfd_create(" + label + ")");
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 || fcntl(fd, F_ADD_SEALS, kSeals) != 0) {
    auto error = fail_errno("sizing " + label + " to " + std::to_string(bytes) + " bytes");
    close(fd);
    return error;
  }
  auto data = map_shared(fd, bytes);
  if (!data) {
    close(fd);
    return fail(data.error().message);
  }
  return SharedMemory(fd, *data, bytes);
}

Result<SharedMemory> SharedMemory::map(int fd) {
  const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return fail_errno("dup of fd " + std::to_string(fd));
  struct stat st {};
  if (fstat(own, &st) != 0) {
    auto error = fail_errno("fstat of fd " + std::to_string(fd));
    close(own);
    return error;
  }
  if (st.st_size <= 0) {
    close(own);
    return fail("fd " + std::to_string(fd) + " is empty: nothing to map");
  }
  const int seals = fcntl(own, F_GET_SEALS);
  if (seals < 0 || (seals & kSeals) != kSeals) {
    close(own);
    return fail("fd " + std::to_string(fd) + " is not sealed against shrinking");
  }
  const auto bytes = static_cast<size_t>(st.st_size);
  auto data = map_shared(own, bytes);
  if (!data) {
    close(own);
    return fail(data.error().message);
  }
  return SharedMemory(own, *data, bytes);
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedMemory::~SharedMemory() { reset(); }

void SharedMemory::close_descriptor() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

void SharedMemory::reset() {
  if (data_ != nullptr) munmap(data_, size_);
  if (fd_ >= 0) close(fd_);
  data_ = nullptr;
  fd_ = -1;
  size_ = 0;
}

}  // namespace dprobe::trace
