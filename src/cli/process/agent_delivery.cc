// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/agent_delivery.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstring>
#include <utility>
#include <vector>

#include "cli/process/launcher.h"
#include "cli/process/load_point.h"
#include "cli/process/process_maps.h"
#include "cli/process/process_root.h"
#include "protocol/channel.h"
#include "symbols/object_resolver.h"

namespace dprobe::cli {
namespace {

constexpr size_t kErrorChunk = 64;
constexpr const char* kAgentSoname = "libdprobe_agent.so";
constexpr size_t kMaxError = 512;

// What the process has already: its C library and its loader.
bool the_process_has(const std::string& soname) {
  return soname.starts_with("libc.so") || soname.starts_with("ld-linux");
}

// The libraries the agent needs that a process may not have, the deepest
// first: the order they can be loaded in.
std::vector<std::pair<std::string, std::string>> agent_libraries() {
  std::vector<std::pair<std::string, std::string>> needed;
  for (auto& [soname, path] : symbols::ObjectResolver(agent_library_path()).libraries()) {
    if (!the_process_has(soname)) needed.insert(needed.begin(), {soname, path});
  }
  return needed;
}

// With --follow: an O_PATH descriptor of dprobe's directory, over `socket`
// ahead of anything else, so that the process's children reach the control
// socket in it through /proc/self/fd/N (agent.cc).
bool send_directory(int socket, const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::byte marker{'d'};
  const auto sent = protocol::send_with_descriptor(socket, std::span(&marker, 1), fd);
  ::close(fd);
  return sent && *sent == 1;
}

// The process loads the agent from /proc/self/fd/N: its root must have
// /proc mounted (every container runtime mounts it; a bare chroot has not).
Result<void> check_proc_mounted(const TracedProcess& process) {
  const std::string proc = "/proc/" + std::to_string(process.caller()) + "/root/proc";
  struct statfs fs {};
  if (::statfs(proc.c_str(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) return {};
  return fail("process " + std::to_string(process.pid()) +
              " has a root of its own without /proc mounted in it: dprobe loads the agent there "
              "through /proc/self/fd; mount proc in its root (as container runtimes do), or "
              "trace it from its own root");
}

}  // namespace

Result<AgentDelivery> AgentDelivery::prepare(TracedProcess& process, ControlServer& server) {
  const auto libc = find_mapped_file(process.pid(), is_libc);
  if (!libc) return fail("the process has no C library mapped: cannot load the agent into it");
  AgentDelivery delivery(process, server);
  for (auto [name, address] : {std::pair{"dlopen", &delivery.dlopen_},
                               {"dlsym", &delivery.dlsym_},
                               {"dlclose", &delivery.dlclose_},
                               {"dlerror", &delivery.dlerror_}}) {
    auto found = function_in(*libc, name);
    if (!found) return unexpected(found.error());
    *address = *found;
  }
  if (!shares_our_root(process.pid())) {
    if (auto proc = check_proc_mounted(process); !proc) return unexpected(proc.error());
    auto files = RemoteFiles::of(process);
    if (!files) return unexpected(files.error());
    delivery.files_.emplace(std::move(*files));
  }
  return delivery;
}

// dlopen(path, flags) in the process; the loader's own words if it fails.
Result<uint64_t> AgentDelivery::load(const std::string& path, int flags,
                                     std::chrono::milliseconds timeout,
                                     const std::function<void()>& between) {
  auto pushed = process_.push_string(path);
  if (!pushed) return unexpected(pushed.error());
  auto handle = process_.call(dlopen_, {*pushed, static_cast<uint64_t>(flags)}, timeout, between);
  if (!handle || *handle != 0) return handle;
  std::string why;
  if (auto text = process_.call(dlerror_, {}, std::chrono::seconds(10)); text && *text != 0) {
    char chunk[kErrorChunk];
    for (uint64_t at = *text; why.size() < kMaxError; at += sizeof(chunk)) {
      if (!process_.read(at, chunk, sizeof(chunk))) break;
      const std::string_view part(chunk, sizeof(chunk));
      why.append(part.substr(0, part.find('\0')));
      if (part.find('\0') != std::string_view::npos) break;
    }
  }
  return fail("the process could not load " + path + (why.empty() ? "" : ": " + why));
}

// Loaded from /proc/self/fd/N, the memfd left open until close_copies():
// the loader takes an object it has under the same name for the one asked,
// so no two copies may be loaded under one number.
Result<uint64_t> AgentDelivery::load_copy(const std::string& name, const std::string& source,
                                          int flags, std::chrono::milliseconds timeout,
                                          const std::function<void()>& between) {
  auto fd = files_->memfd_with(name, source);
  if (!fd) return unexpected(fd.error());
  if (agent_fresh_descriptor_ != 0) {
    // The hook: under a number no object loaded before (another attach's
    // libraries) is named by.
    auto fresh = process_.call(agent_fresh_descriptor_, {static_cast<uint64_t>(*fd)},
                               std::chrono::seconds(10));
    if (!fresh || static_cast<int64_t>(*fresh) < 0) {
      files_->close(*fd);
      return fail("the process has no descriptor number free to load " + name + " from");
    }
    *fd = static_cast<int>(*fresh);
  }
  copies_.push_back(*fd);
  auto handle = load(own_descriptor_path(*fd), flags, timeout, between);
  if (!handle) return fail(handle.error().message + " (a copy of " + source + ")");
  return handle;
}

// The loader keeps what it mapped. Before any probe is armed the C
// library closes them; after, the agent does: its work is never the
// program's (no probe, no system-call event counts it).
void AgentDelivery::close_copies(bool probes_armed) {
  for (const int fd : std::exchange(copies_, {})) {
    if (probes_armed && agent_close_descriptor_ != 0) {
      (void)process_.call(agent_close_descriptor_, {static_cast<uint64_t>(fd)},
                          std::chrono::seconds(10));
    } else {
      files_->close(fd);
    }
  }
}

// A library the process has loaded already (another attach's), by soname.
Result<uint64_t> AgentDelivery::loaded(const std::string& soname, int flags) {
  auto pushed = process_.push_string(soname);
  if (!pushed) return unexpected(pushed.error());
  return process_.call(dlopen_, {*pushed, static_cast<uint64_t>(flags | RTLD_NOLOAD)},
                       std::chrono::seconds(10));
}

Result<uint64_t> AgentDelivery::load_agent(bool follow) {
  auto agent = load_agent_and_libraries(follow);
  if (!agent && by_descriptor()) close_copies(/*probes_armed=*/false);
  return agent;
}

Result<uint64_t> AgentDelivery::load_agent_and_libraries(bool follow) {
  constexpr int kFlags = RTLD_NOW | RTLD_GLOBAL;
  if (by_descriptor()) {
    // Each found by its soname when the agent names it, already loaded.
    for (const auto& [soname, path] : agent_libraries()) {
      auto there = loaded(soname, kFlags);
      if (!there) return there;
      if (*there != 0) continue;
      if (auto copy = load_copy(soname, path, kFlags); !copy) return copy;
    }
  }
  auto agent = by_descriptor() ? loaded(kAgentSoname, kFlags) : Result<uint64_t>(0);
  if (agent && *agent == 0) {
    agent = by_descriptor() ? load_copy(kAgentSoname, agent_library_path(), kFlags)
                            : load(agent_library_path(), kFlags);
  }
  if (!agent) return agent;
  agent_ = *agent;
  // Looked up now, before any probe is armed: the program's dlsym must
  // not run for dprobe once they are.
  for (auto [name, address] : {std::pair{"dprobe_agent_close", &agent_close_},
                               {"dprobe_agent_close_descriptor", &agent_close_descriptor_},
                               {"dprobe_agent_fresh_descriptor", &agent_fresh_descriptor_}}) {
    auto found = agent_function(name);
    if (!found) return unexpected(found.error());
    *address = *found;
  }
  if (by_descriptor()) {
    if (auto handed = hand_control(follow); !handed) return unexpected(handed.error());
  }
  return agent_;
}

// The address of the agent's exported `name`, 0 if this agent has none.
Result<uint64_t> AgentDelivery::agent_function(const std::string& name) {
  auto pushed = process_.push_string(name);
  if (!pushed) return unexpected(pushed.error());
  return process_.call(dlsym_, {agent_, *pushed}, std::chrono::seconds(10));
}

// The agent's end of a socket pair the process made; ours is the
// connection the session takes from the server.
Result<void> AgentDelivery::hand_control(bool follow) {
  auto adopt = agent_function("dprobe_agent_adopt_control");
  if (!adopt) return unexpected(adopt.error());
  if (*adopt == 0) return fail("the agent cannot take its channel from dprobe (an older build?)");
  auto pair = files_->socket_pair();
  if (!pair) return unexpected(pair.error());
  if (follow && !send_directory(pair->local, server_.directory())) {
    files_->close(pair->remote);
    ::close(pair->local);
    return fail("cannot hand the process dprobe's directory: " + std::string(std::strerror(errno)));
  }
  auto adopted = process_.call(
      *adopt,
      {static_cast<uint64_t>(pair->remote), static_cast<uint64_t>(::getpid()), follow ? 1u : 0u},
      std::chrono::seconds(10));
  if (!adopted) {
    files_->close(pair->remote);
    ::close(pair->local);
    return unexpected(adopted.error());
  }
  server_.expect(process_.pid(), pair->local);
  return {};
}

Result<uint64_t> AgentDelivery::load_hook(bool follow, std::chrono::milliseconds timeout,
                                          const std::function<void()>& between) {
  const std::string name = follow ? "attach-follow.so" : "attach.so";
  if (by_descriptor()) {
    close_copies(/*probes_armed=*/false);  // the agent's libraries, loaded
    return load_copy(name, attach_hook_path(), RTLD_NOW, timeout, between);
  }
  // A new file in our private directory, never written through a symlink:
  // the loader runs the constructor of a new file each time.
  auto hook = server_.install_copy(attach_hook_path(), name);
  if (!hook) return unexpected(hook.error());
  hook_file_ = name;
  return load(*hook, RTLD_NOW, timeout, between);
}

void AgentDelivery::hook_done() {
  if (!hook_file_.empty()) server_.remove_file(std::exchange(hook_file_, {}));
  if (by_descriptor()) close_copies(/*probes_armed=*/true);
}

void AgentDelivery::close_hook(uint64_t hook) {
  const uint64_t closer = agent_close_ != 0 ? agent_close_ : dlclose_;
  (void)process_.call(closer, {hook}, std::chrono::seconds(10));
}

}  // namespace dprobe::cli
