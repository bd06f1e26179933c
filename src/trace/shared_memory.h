// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// An anonymous shared memory block, backed by a memfd so that another
// process can map the very same pages from the file descriptor (passed over
// the control socket or inherited across fork).
//
//   auto shm = SharedMemory::create("dprobe-ring", ring_bytes_for(1 << 20));
//   if (!shm) return fail(shm.error().message);
//   send_fd(socket, shm->fd());                // the other side:
//   auto peer = SharedMemory::map(received_fd);  // same pages, own fd
#ifndef DPROBE_TRACE_SHARED_MEMORY_H_
#define DPROBE_TRACE_SHARED_MEMORY_H_

#include <cstddef>
#include <string_view>

#include "base/result.h"

namespace dprobe::trace {

// Owns one MAP_SHARED mapping and the descriptor behind it; both are released
// by the destructor. Move-only, so exactly one owner unmaps.
class SharedMemory {
 public:
  // A new memfd named `name` (shown in /proc/PID/fd, for humans only) of
  // `bytes` zero-filled bytes, mapped read-write.
  static Result<SharedMemory> create(std::string_view name, size_t bytes);
  // Maps the whole of an existing memfd (its size from fstat). The
  // descriptor is duplicated: the caller still owns and closes `fd`.
  static Result<SharedMemory> map(int fd);

  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();

  int fd() const { return fd_; }
  // Closes the descriptor once it was handed on; the mapping stays.
  void close_descriptor();
  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  SharedMemory(int fd, void* data, size_t size) : fd_(fd), data_(data), size_(size) {}
  void reset();

  int fd_ = -1;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace dprobe::trace

#endif  // DPROBE_TRACE_SHARED_MEMORY_H_
