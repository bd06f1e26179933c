// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "cli/process/pidfd.h"
#include "cli/process/private_dir.h"
#include "protocol/channel.h"

namespace dprobe::cli {
namespace {

constexpr int kBacklog = 64;

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

constexpr const char* kSocketName = "ctl";

// A session directory of our own in a trusted base: made by mkdtemp (0700),
// then opened without following a symlink and checked again, so that what
// is created through the descriptor lands in it and nowhere else.
Result<std::pair<std::string, int>> make_session_dir() {
  const uid_t me = ::geteuid();
  auto base = private_runtime_dir(me);
  if (!base) return unexpected(base.error());
  std::string dir = *base + "/dprobe-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return fail(errno_text("mkdtemp"));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fail(errno_text("open session directory"));
  if (auto ok = check_private(fd, me); !ok) {
    ::close(fd);
    return fail(dir + ": " + ok.error().message);
  }
  return std::pair{std::move(dir), fd};
}

Result<void> copy_bytes(int from, int to) {
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(from, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fail(errno_text("read"));
    if (got == 0) return {};
    for (ssize_t done = 0; done < got;) {
      const ssize_t put = ::write(to, buffer + done, static_cast<size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) return fail(errno_text("write"));
      done += put;
    }
  }
}

// Whether `pid` has ended, child or not (`run`'s program is the shell's
// child, `attach`'s anybody's): its pidfd is readable once it has.
bool exited(pid_t pid) {
  const int fd = open_pidfd(pid);
  if (fd < 0) return errno == ESRCH;
  pollfd ended{fd, POLLIN, 0};
  const bool gone = ::poll(&ended, 1, 0) > 0;
  ::close(fd);
  return gone;
}

}  // namespace

ControlServer::ControlServer(std::string dir, int dir_fd, int listener)
    : dir_(std::move(dir)),
      socket_path_(dir_ + "/" + kSocketName),
      dir_fd_(dir_fd),
      listener_(listener) {}

ControlServer::ControlServer(ControlServer&& other) noexcept
    : dir_(std::move(other.dir_)),
      socket_path_(std::move(other.socket_path_)),
      dir_fd_(other.dir_fd_),
      listener_(other.listener_),
      made_(other.made_) {
  other.made_.socket = -1;
  other.listener_ = -1;
  other.dir_fd_ = -1;
  other.dir_.clear();
}

ControlServer::~ControlServer() {
  if (made_.socket >= 0) ::close(made_.socket);
  if (listener_ >= 0) ::close(listener_);
  if (dir_fd_ >= 0) {
    ::unlinkat(dir_fd_, kSocketName, 0);
    ::close(dir_fd_);
  }
  if (!dir_.empty()) ::rmdir(dir_.c_str());  // only if empty
}

Result<ControlServer> ControlServer::create() {
  auto made = make_session_dir();
  if (!made) return unexpected(made.error());
  auto [dir, dir_fd] = std::move(*made);
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) {
    ::close(dir_fd);
    ::rmdir(dir.c_str());
    return fail(errno_text("socket"));
  }
  ControlServer server(std::move(dir), dir_fd, listener);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (server.socket_path_.size() >= sizeof(address.sun_path)) return fail("socket path too long");
  std::memcpy(address.sun_path, server.socket_path_.c_str(), server.socket_path_.size() + 1);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return fail(errno_text("bind"));
  }
  if (::listen(listener, kBacklog) != 0) return fail(errno_text("listen"));
  return server;
}

Result<std::string> ControlServer::install_copy(const std::string& source,
                                                const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return fail("bad file name " + name);
  const int from = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (from < 0) return fail(errno_text(source));
  // O_EXCL and O_NOFOLLOW: a new file of ours, never one planted here.
  const int to =
      ::openat(dir_fd_, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
  if (to < 0) {
    ::close(from);
    return fail(errno_text(dir_ + "/" + name));
  }
  auto copied = copy_bytes(from, to);
  ::close(from);
  if (::close(to) != 0 && copied) copied = fail(errno_text("close"));
  if (!copied) {
    remove_file(name);
    return fail("cannot copy " + source + ": " + copied.error().message);
  }
  return dir_ + "/" + name;
}

void ControlServer::remove_file(const std::string& name) {
  if (dir_fd_ >= 0) ::unlinkat(dir_fd_, name.c_str(), 0);
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

void ControlServer::claim_from_here() const {
  if (listener_ >= 0) (void)::listen(listener_, kBacklog);
}

void ControlServer::stop_accepting() {
  if (listener_ >= 0) ::shutdown(listener_, SHUT_RDWR);
}

void ControlServer::expect(pid_t pid, int socket) {
  if (made_.socket >= 0) ::close(made_.socket);
  made_ = {socket, pid};
}

Result<int> ControlServer::accept_from(pid_t pid, std::chrono::milliseconds timeout) {
  if (made_.socket >= 0 && made_.pid == pid) return std::exchange(made_.socket, -1);
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
