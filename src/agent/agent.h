// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// How the agent reaches its CLI, for what happens after start-up: a forked
// child that is followed opens a session of its own, and a traced process
// that execs takes the agent into its new program.
//
//   if (follow_children()) start_session();   // in a forked child
#ifndef DPROBE_AGENT_AGENT_H_
#define DPROBE_AGENT_AGENT_H_

#include <string>

namespace dprobe::agent {

// The environment that brings the agent into a program (LD_PRELOAD), and
// where its CLI listens (DPROBE_CONTROL); DPROBE_FOLLOW=1 asks it to trace
// the program's children too.
inline constexpr const char* kControlEnv = "DPROBE_CONTROL";
inline constexpr const char* kFollowEnv = "DPROBE_FOLLOW";

// The CLI's socket, empty when the agent never had a session.
const std::string& control_path();
// Closes dprobe's directory, handed over by `attach --follow` into a
// container (agent.cc): at the end of a session no descriptor of the
// host's stays in the process.
void close_control_directory();
// --follow: children (forked, or started with exec) are traced too.
bool follow_children();
// The agent library's own path, for LD_PRELOAD.
const std::string& agent_path();

// A session with the CLI at control_path(), as at start-up: true when the
// probes are armed and the program may go on.
bool start_session();

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_AGENT_H_
