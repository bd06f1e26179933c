// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Starts the command to trace with the agent preloaded and the control
// socket named in its environment (and DPROBE_FOLLOW=1 to have the agent
// stay in the environment of the children too). A command that cannot be executed is an
// error here, not a child that silently exits 127.
//
//   auto child = launch({"ls", "/"}, "/usr/bin/ls", agent_path, socket_path, false);
//   if (!child) report(child.error().message);
#ifndef DPROBE_CLI_PROCESS_LAUNCHER_H_
#define DPROBE_CLI_PROCESS_LAUNCHER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/result.h"

namespace dprobe::cli {

inline constexpr const char* kControlEnv = "DPROBE_CONTROL";
inline constexpr const char* kFollowEnv = "DPROBE_FOLLOW";

// Why a command may not be traced: missing, not executable, set-uid/gid.
Result<void> check_traceable(const std::string& path);

Result<pid_t> launch(const std::vector<std::string>& argv, const std::string& executable,
                     const std::string& agent, const std::string& control_socket, bool follow);

// dprobe ignores SIGPIPE (a reader of its output that goes away must not
// kill it and orphan the program); the program it launches gets back the
// disposition dprobe was started with.
void ignore_sigpipe();

// The agent library: next to the dprobe executable (the build tree), or in
// an installed tree's lib/dprobe.
std::string agent_library_path();
// What `attach` has the process load to start the agent (attach_hook.c).
std::string attach_hook_path();

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_LAUNCHER_H_
