// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// How `dprobe attach` has a process load the agent and the attach hook
// (attach_hook.c), and reach dprobe. A process that shares our root loads
// them by path and connects to the control socket by path, as always. A
// process in a container cannot see those paths: it loads copies from
// memfds of its own (with the libraries the agent needs beyond the C
// library), and the agent is handed one end of a socket pair the process
// made (cli/process/remote_files.h). Nothing is placed in the container's
// file system either way.
//
//   auto delivery = AgentDelivery::prepare(process, server);
//   auto agent = delivery->load_agent();
//   auto hook = delivery->load_hook(follow, timeout, between);
//   delivery->hook_done(*hook);
#ifndef DPROBE_CLI_PROCESS_AGENT_DELIVERY_H_
#define DPROBE_CLI_PROCESS_AGENT_DELIVERY_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "cli/process/control_server.h"
#include "cli/process/remote_files.h"
#include "cli/process/traced_process.h"

namespace dprobe::cli {

class AgentDelivery {
 public:
  // The process's dlopen, dlsym, dlclose; descriptors made in it when its
  // root is not ours.
  static Result<AgentDelivery> prepare(TracedProcess& process, ControlServer& server);

  bool by_descriptor() const { return files_.has_value(); }

  // Loads the agent (RTLD_GLOBAL: the hook finds its entry by name);
  // by descriptor, its libraries first and then its end of the control
  // channel. The agent's handle.
  // `follow`: by descriptor, the agent gets dprobe's directory too, for
  // the process's children to reach it.
  Result<uint64_t> load_agent(bool follow);
  // Loads a fresh copy of the hook, which starts the session inside the
  // loader's lock; `between` runs here meanwhile (TracedProcess::call).
  Result<uint64_t> load_hook(bool follow, std::chrono::milliseconds timeout,
                             const std::function<void()>& between);
  // Takes away what the hook was loaded from (after the session's start).
  void hook_done();
  // Unloads the hook: through the agent, whose own work the loader's
  // then is (no probe counts its frees), or dlclose for an older agent.
  void close_hook(uint64_t hook);

 private:
  AgentDelivery(TracedProcess& process, ControlServer& server)
      : process_(process), server_(server) {}
  Result<uint64_t> load(const std::string& path, int flags,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10),
                        const std::function<void()>& between = {});
  Result<uint64_t> load_copy(const std::string& name, const std::string& source, int flags,
                             std::chrono::milliseconds timeout = std::chrono::seconds(10),
                             const std::function<void()>& between = {});
  Result<uint64_t> load_agent_and_libraries(bool follow);
  Result<uint64_t> agent_function(const std::string& name);
  Result<void> hand_control(bool follow);
  Result<uint64_t> loaded(const std::string& soname, int flags);
  void close_copies(bool probes_armed);

  TracedProcess& process_;
  ControlServer& server_;
  std::optional<RemoteFiles> files_;
  uint64_t dlopen_ = 0;
  uint64_t dlsym_ = 0;
  uint64_t dlclose_ = 0;
  uint64_t dlerror_ = 0;
  uint64_t agent_ = 0;  // the agent's handle, once loaded
  // Its entries that unload the hook, close a descriptor and renumber one
  // as the agent's own work (agent/descriptor_entries.cc); 0 in an older
  // agent.
  uint64_t agent_close_ = 0;
  uint64_t agent_close_descriptor_ = 0;
  uint64_t agent_fresh_descriptor_ = 0;
  std::string hook_file_;    // the hook's copy in our directory, by path
  std::vector<int> copies_;  // the memfds copies were loaded from, by descriptor
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_AGENT_DELIVERY_H_
