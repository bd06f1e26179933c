// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/remote_files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "cli/process/load_point.h"
#include "cli/process/pidfd.h"
#include "cli/process/process_maps.h"

namespace dprobe::cli {
namespace {

constexpr auto kCallTimeout = std::chrono::seconds(10);

// A whole file written to `fd` from its start.
Result<void> copy_into(int fd, const std::string& source) {
  std::ifstream in(source, std::ios::binary);
  if (!in) return fail("cannot read " + source + ": " + std::string(std::strerror(errno)));
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return fail("cannot write the copy of " + source + ": " + std::string(std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

std::string own_descriptor_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

Result<RemoteFiles> RemoteFiles::of(TracedProcess& process) {
  const auto libc = find_mapped_file(process.pid(), is_libc);
  if (!libc) return fail("the process has no C library mapped: cannot make descriptors in it");
  auto memfd_create = function_in(*libc, "memfd_create");
  if (!memfd_create) return unexpected(memfd_create.error());
  auto socketpair = function_in(*libc, "socketpair");
  if (!socketpair) return unexpected(socketpair.error());
  auto close = function_in(*libc, "close");
  if (!close) return unexpected(close.error());
  return RemoteFiles(process, *memfd_create, *socketpair, *close);
}

Result<int> RemoteFiles::call_for_descriptor(uint64_t function,
                                             std::initializer_list<uint64_t> args,
                                             const std::string& what) {
  auto result = process_.call(function, args, kCallTimeout);
  if (!result) return unexpected(result.error());
  const auto fd = static_cast<int>(static_cast<int64_t>(*result));
  if (fd < 0) return fail("the process could not make " + what);
  return fd;
}

Result<int> RemoteFiles::memfd_with(const std::string& name, const std::string& source) {
  auto pushed = process_.push_string(name);
  if (!pushed) return unexpected(pushed.error());
  auto fd = call_for_descriptor(memfd_create_, {*pushed, MFD_CLOEXEC}, "a memfd for " + name);
  if (!fd) return fd;
  // The process's descriptor, opened anew from here: the same memfd. By
  // the calling thread's entry: a main thread that has exited shows none.
  const std::string path =
      "/proc/" + std::to_string(process_.caller()) + "/fd/" + std::to_string(*fd);
  const int ours = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (ours < 0) {
    close(*fd);
    return fail("cannot open " + path + " to write " + name +
                " into: " + std::string(std::strerror(errno)));
  }
  auto copied = copy_into(ours, source);
  ::close(ours);
  if (!copied) {
    close(*fd);
    return unexpected(copied.error());
  }
  return fd;
}

Result<RemoteFiles::SocketPair> RemoteFiles::socket_pair() {
  auto buffer = process_.push_string(std::string(2 * sizeof(int), 'x'));
  if (!buffer) return unexpected(buffer.error());
  auto made = call_for_descriptor(socketpair_, {AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, *buffer},
                                  "a socket pair");
  if (!made) return unexpected(made.error());
  int fds[2] = {-1, -1};
  if (auto read = process_.read(*buffer, fds, sizeof(fds)); !read) return unexpected(read.error());
  const int pidfd = open_pidfd(process_.pid());
  const int local = pidfd < 0 ? -1 : static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, fds[1], 0));
  const std::string why = std::string(std::strerror(errno));
  if (pidfd >= 0) ::close(pidfd);
  close(fds[1]);  // ours now, or never
  if (local < 0) {
    close(fds[0]);
    return fail("cannot take a socket from the process (pidfd_getfd): " + why);
  }
  return SocketPair{fds[0], local};
}

void RemoteFiles::close(int remote_fd) {
  (void)process_.call(close_, {static_cast<uint64_t>(remote_fd)}, kCallTimeout);
}

}  // namespace dprobe::cli
