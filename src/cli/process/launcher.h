// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// How `run` starts the command to trace, as `strace -D` does: the process
// the shell started becomes the program (its pid, parent, process group,
// terminal, the signals sent to it and its exit status are the program's
// own: nothing is forwarded), and dprobe goes on in a process beside it,
// the collector, which serves the agent and writes the trace. The
// collector is a grandchild, handed to init (or the nearest subreaper): no
// child of the program's, which a program that waits for any child would
// reap. The program starts with the agent preloaded and the control
// socket named in its environment (and DPROBE_FOLLOW=1 to have the agent
// stay in the environment of its children too).
//
//   auto split = split_for_run([&] { server.claim_from_here(); });
//   if (split->in_program()) exec_program(*split, argv, executable, agent, socket, follow);
//   if (!program_started(*split)) return;   // the program said why, and exited 127
//   ... serve and collect; the program's pidfd says when it has ended ...
#ifndef DPROBE_CLI_PROCESS_LAUNCHER_H_
#define DPROBE_CLI_PROCESS_LAUNCHER_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "base/result.h"

namespace dprobe::cli {

inline constexpr const char* kControlEnv = "DPROBE_CONTROL";
inline constexpr const char* kFollowEnv = "DPROBE_FOLLOW";

// Why a command may not be traced: missing, not executable, set-uid/gid.
Result<void> check_traceable(const std::string& path);

struct RunSplit {
  pid_t program = 0;  // the pid the program runs as: the shell's child
  bool collector = false;
  int program_fd = -1;   // a pidfd of the program (the collector's)
  int exec_report = -1;  // the program's exec: written with errno on failure
  bool in_program() const { return !collector; }
};

// Forks the collector; returns in both processes, in the program's once
// the collector has done `in_collector_first` (given the program's pid;
// the collector is still the program's descendant then, as Yama's ptrace
// scope 1 asks of a tracer).
Result<RunSplit> split_for_run(const std::function<void(pid_t program)>& in_collector_first);

// In the program's process: execs the command (every descriptor of
// dprobe's is close-on-exec), or says why it could not and exits 127.
[[noreturn]] void exec_program(const RunSplit& split, const std::vector<std::string>& argv,
                               const std::string& executable, const std::string& agent,
                               const std::string& control_socket, bool follow);

// In the collector: waits for the program's exec; false when it failed
// (the program said why).
bool program_started(RunSplit& split);

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
