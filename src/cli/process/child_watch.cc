// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/child_watch.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "cli/output/terminal_text.h"

namespace dprobe::cli {
namespace {

constexpr int kWaitMs = 20;  // how soon stop() is noticed
constexpr auto kPollPeriod = std::chrono::milliseconds(10);
constexpr auto kDrainLimit = std::chrono::milliseconds(200);
constexpr int kReceiveBuffer = 4 << 20;  // events of a busy machine, between two reads
constexpr size_t kNamesShown = 3;

std::string comm_of(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

// Subscribes to the kernel's process events; -1 without the capability.
int open_process_events() {
  const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
  if (fd < 0) return -1;
  const int size = kReceiveBuffer;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0) {
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  }
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = CN_IDX_PROC;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  // nlmsghdr, cn_msg, then the operation: listen.
  std::byte message[sizeof(nlmsghdr) + sizeof(cn_msg) + sizeof(proc_cn_mcast_op)] = {};
  nlmsghdr header{};
  header.nlmsg_len = sizeof(message);
  header.nlmsg_type = NLMSG_DONE;
  cn_msg connector{};
  connector.id.idx = CN_IDX_PROC;
  connector.id.val = CN_VAL_PROC;
  connector.len = sizeof(proc_cn_mcast_op);
  const proc_cn_mcast_op listen = PROC_CN_MCAST_LISTEN;
  std::memcpy(message, &header, sizeof(header));
  std::memcpy(message + sizeof(header), &connector, sizeof(connector));
  std::memcpy(message + sizeof(header) + sizeof(connector), &listen, sizeof(listen));
  if (::send(fd, message, sizeof(message), 0) != static_cast<ssize_t>(sizeof(message))) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The direct children of `pid`'s threads, from /proc.
std::vector<pid_t> children_in_proc(pid_t pid) {
  std::vector<pid_t> children;
  std::error_code ec;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream list(task.path() / "children");
    for (long child = 0; list >> child;) children.push_back(static_cast<pid_t>(child));
  }
  return children;
}

}  // namespace

ChildWatch::ChildWatch(pid_t root, bool process_events) : root_(root) {
  live_.insert(root);
  // Subscribed before the constructor returns: no fork after it is missed.
  const int events = process_events ? open_process_events() : -1;
  thread_ = std::thread([this, events] {
    if (events >= 0) {
      watch_events(events);
      ::close(events);
    } else {
      poll_proc();
    }
  });
}

ChildWatch::~ChildWatch() { (void)stop(); }

UntracedChildren ChildWatch::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  UntracedChildren seen;
  seen.count = names_.size();
  for (const std::string& name : names_) {
    bool known = false;
    for (const std::string& other : seen.names) known = known || other == name;
    if (!known) seen.names.push_back(name);
  }
  return seen;
}

void ChildWatch::watch_events(int socket) {
  alignas(nlmsghdr) std::byte buffer[8192];
  // The kernel queues an event as the fork happens: once stop() is asked,
  // what is queued is still read, until none is left (or, when the rest
  // of the machine keeps forking, for a moment).
  std::optional<std::chrono::steady_clock::time_point> drain_until;
  while (true) {
    if (!drain_until && stop_) drain_until = std::chrono::steady_clock::now() + kDrainLimit;
    if (drain_until && std::chrono::steady_clock::now() > *drain_until) break;
    pollfd ready{socket, POLLIN, 0};
    if (::poll(&ready, 1, drain_until ? 0 : kWaitMs) <= 0) {
      if (drain_until) break;
      continue;
    }
    const ssize_t got = ::recv(socket, buffer, sizeof(buffer), 0);
    if (got <= 0) continue;  // ENOBUFS: some events were lost; go on with the next
    size_t at = 0;
    while (at + sizeof(nlmsghdr) <= static_cast<size_t>(got)) {
      nlmsghdr header{};
      std::memcpy(&header, buffer + at, sizeof(header));
      if (header.nlmsg_len < sizeof(header) || at + header.nlmsg_len > static_cast<size_t>(got))
        break;
      const size_t event_at = at + sizeof(nlmsghdr) + sizeof(cn_msg);
      if (event_at + sizeof(proc_event) <= at + header.nlmsg_len) {
        proc_event event{};
        std::memcpy(&event, buffer + event_at, sizeof(event));
        if (event.what == proc_event::PROC_EVENT_FORK &&
            event.event_data.fork.child_pid == event.event_data.fork.child_tgid) {
          forked(event.event_data.fork.parent_tgid, event.event_data.fork.child_tgid);
        } else if (event.what == proc_event::PROC_EVENT_EXEC) {
          execed(event.event_data.exec.process_tgid);
        } else if (event.what == proc_event::PROC_EVENT_EXIT &&
                   event.event_data.exit.process_pid == event.event_data.exit.process_tgid) {
          exited(event.event_data.exit.process_tgid);
        }
      }
      at += (header.nlmsg_len + 3u) & ~size_t{3};
    }
  }
}

void ChildWatch::poll_proc() {
  for (bool last = false; !last;) {
    last = stop_;  // one more pass once stop() is asked
    const std::set<pid_t> known = live_;
    for (pid_t pid : known) {
      if (::kill(pid, 0) != 0 && errno == ESRCH) {
        exited(pid);
        continue;
      }
      for (pid_t child : children_in_proc(pid)) {
        if (live_.count(child) == 0) forked(pid, child);
      }
      if (pid != root_) execed(pid);
    }
    if (!last) std::this_thread::sleep_for(kPollPeriod);
  }
}

void ChildWatch::forked(pid_t parent, pid_t child) {
  if (live_.count(parent) == 0 || child == root_) return;
  std::string name = comm_of(child);
  if (name.empty()) name = parent == root_ ? comm_of(root_) : names_[index_[parent]];
  live_.insert(child);
  index_[child] = names_.size();
  names_.push_back(name.empty() ? "?" : name);
}

void ChildWatch::execed(pid_t pid) {
  const auto found = index_.find(pid);
  if (found == index_.end()) return;
  // Gone already: its last name known stays.
  if (std::string name = comm_of(pid); !name.empty()) names_[found->second] = name;
}

void ChildWatch::exited(pid_t pid) {
  if (pid == root_) return;  // the root's pid is watched to the end: its children may outlive it
  live_.erase(pid);
  index_.erase(pid);
}

std::string untraced_children_message(const UntracedChildren& children) {
  if (children.count == 0) return {};
  std::string names;
  for (size_t i = 0; i < children.names.size() && i < kNamesShown; ++i) {
    names += (i == 0 ? "" : ", ") + printable(children.names[i]);
  }
  if (children.names.size() > kNamesShown) names += ", ...";
  const bool one = children.count == 1;
  return "dprobe: " + std::to_string(children.count) + " child process" + (one ? "" : "es") +
         " ran untraced (" + names + "); --follow traces " + (one ? "it" : "them") + "\n";
}

}  // namespace dprobe::cli
