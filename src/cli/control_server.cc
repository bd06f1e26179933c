// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/control_server.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "protocol/channel.h"

namespace dprobe::cli {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

std::string runtime_dir() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  return xdg != nullptr && *xdg != '\0' ? xdg : "/tmp";
}

bool exited(pid_t pid) {
  // WNOWAIT: look without reaping; the caller collects the status later.
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

}  // namespace

ControlServer::ControlServer(std::string dir, int listener)
    : dir_(std::move(dir)), socket_path_(dir_ + "/ctl"), listener_(listener) {}

ControlServer::ControlServer(ControlServer&& other) noexcept
    : dir_(std::move(other.dir_)),
      socket_path_(std::move(other.socket_path_)),
      listener_(other.listener_) {
  other.listener_ = -1;
  other.dir_.clear();
}

ControlServer::~ControlServer() {
  if (listener_ >= 0) ::close(listener_);
  if (!dir_.empty()) {
    ::unlink(socket_path_.c_str());
    ::rmdir(dir_.c_str());
  }
}

Result<ControlServer> ControlServer::create() {
  std::string dir = runtime_dir() + "/dprobe-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return fail(errno_text("mkdtemp"));  // mode 0700
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) {
    ::rmdir(dir.c_str());
    return fail(errno_text("socket"));
  }
  ControlServer server(std::move(dir), listener);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (server.socket_path_.size() >= sizeof(address.sun_path)) return fail("socket path too long");
  std::memcpy(address.sun_path, server.socket_path_.c_str(), server.socket_path_.size() + 1);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return fail(errno_text("bind"));
  }
  if (::listen(listener, 64) != 0) return fail(errno_text("listen"));
  return server;
}

std::optional<ControlServer::Connection> ControlServer::accept_any(std::chrono::milliseconds wait) {
  pollfd pfd{listener_, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(wait.count())) <= 0) return std::nullopt;
  const int conn = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
  if (conn < 0) return std::nullopt;
  auto peer = protocol::peer_credentials(conn);
  if (!peer || peer->uid != ::getuid()) {
    ::close(conn);
    return std::nullopt;
  }
  return Connection{conn, static_cast<pid_t>(peer->pid)};
}

void ControlServer::stop_accepting() {
  if (listener_ >= 0) ::shutdown(listener_, SHUT_RDWR);
}

Result<int> ControlServer::accept_from(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{listener_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, 50);
    if (ready < 0 && errno != EINTR) return fail(errno_text("poll"));
    if (ready > 0) {
      const int conn = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      auto peer = protocol::peer_credentials(conn);
      if (peer && peer->uid == ::getuid() && peer->pid == pid) return conn;
      ::close(conn);  // someone else: not ours to talk to
      continue;
    }
    if (exited(pid)) {
      return fail("the program exited before the agent started (is it statically linked?)");
    }
  }
  return fail("the agent did not start in the program within " + std::to_string(timeout.count()) +
              " ms");
}

}  // namespace dprobe::cli
