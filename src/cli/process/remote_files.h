// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Descriptors made inside a process held by TracedProcess, for a process
// whose root is not ours (a container): what `dprobe attach` cannot hand
// it by path. A library is copied into a memfd of the process's own,
// written by dprobe through /proc/PID/fd, and loaded from
// /proc/self/fd/N; the control channel is a socket pair the process makes,
// whose other end dprobe takes with pidfd_getfd. Nothing is written into
// the process's file system, and every descriptor made is closed again in
// the process once it has served.
//
//   auto files = RemoteFiles::of(process);
//   auto fd = files->memfd_with("libdprobe_agent.so", agent_library_path());
//   ... dlopen("/proc/self/fd/" + std::to_string(*fd)) ...; files->close(*fd);
#ifndef DPROBE_CLI_PROCESS_REMOTE_FILES_H_
#define DPROBE_CLI_PROCESS_REMOTE_FILES_H_

#include <cstdint>
#include <string>

#include "base/result.h"
#include "cli/process/traced_process.h"

namespace dprobe::cli {

class RemoteFiles {
 public:
  // The process's C library functions it takes; an error if one is missing.
  static Result<RemoteFiles> of(TracedProcess& process);

  // A new memfd in the process (close-on-exec) holding a copy of `source`.
  Result<int> memfd_with(const std::string& name, const std::string& source);
  // A connected pair of stream sockets: `remote` stays in the process
  // (close-on-exec), `local` is dprobe's end.
  struct SocketPair {
    int remote;
    int local;
  };
  Result<SocketPair> socket_pair();
  void close(int remote_fd);

 private:
  RemoteFiles(TracedProcess& process, uint64_t memfd_create, uint64_t socketpair, uint64_t close)
      : process_(process), memfd_create_(memfd_create), socketpair_(socketpair), close_(close) {}
  Result<int> call_for_descriptor(uint64_t function, std::initializer_list<uint64_t> args,
                                  const std::string& what);

  TracedProcess& process_;
  uint64_t memfd_create_;
  uint64_t socketpair_;
  uint64_t close_;
};

// "/proc/self/fd/N": how the process's loader opens the memfd N.
std::string own_descriptor_path(int fd);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_REMOTE_FILES_H_
