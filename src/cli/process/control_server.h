// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The CLI's end of the control channel: a Unix socket in a private
// directory (mode 0700, so only this user can reach it, inside a base no
// other user can change: private_dir.h), whose one connection must come
// from the traced process of the same user.
//
//   auto server = ControlServer::create();
//   auto child = launch(..., server->socket_path());
//   auto conn = server->accept_from(*child, std::chrono::seconds(10));
#ifndef DPROBE_CLI_PROCESS_CONTROL_SERVER_H_
#define DPROBE_CLI_PROCESS_CONTROL_SERVER_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "base/result.h"

namespace dprobe::cli {

class ControlServer {
 public:
  static Result<ControlServer> create();
  ControlServer(ControlServer&& other) noexcept;
  ControlServer& operator=(ControlServer&&) = delete;
  ~ControlServer();

  const std::string& socket_path() const { return socket_path_; }
  // Listens again from the calling process: the agent reads the pid of the
  // process that last listened as its dprobe's (SO_PEERCRED), which after
  // `run`'s fork is the collector (cli/process/launcher.h).
  void claim_from_here() const;
  // The private directory the socket is in (mode 0700).
  const std::string& directory() const { return dir_; }

  // Copies `source` into the private directory as a new file `name` (never
  // through a symlink or over a file already there); returns its path.
  Result<std::string> install_copy(const std::string& source, const std::string& name);
  // Removes the file `name` from the private directory.
  void remove_file(const std::string& name);

  // The connection of process `pid` (checked by its credentials), or an
  // error if it exits or stays silent past the timeout.
  Result<int> accept_from(pid_t pid, std::chrono::milliseconds timeout);
  // A connection to `pid` made another way (a socket pair, where the
  // process cannot reach our directory: cli/process/remote_files.h):
  // accept_from(pid) takes it, once. The server owns it until then.
  void expect(pid_t pid, int socket);

  // A connection of any process of this user (a followed child, or a
  // traced process after exec), if one comes within `wait`.
  struct Connection {
    int socket;
    pid_t pid;
  };
  std::optional<Connection> accept_any(std::chrono::milliseconds wait);
  // Wakes a thread waiting in accept_any; no connection is taken after.
  void stop_accepting();

 private:
  ControlServer(std::string dir, int dir_fd, int listener);
  std::string dir_;
  std::string socket_path_;
  int dir_fd_ = -1;  // the private directory, opened once it was checked
  int listener_ = -1;
  struct Made {
    int socket = -1;
    pid_t pid = 0;
  } made_;
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_CONTROL_SERVER_H_
