// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// How a traced program that changes its root (chroot, pivot_root: what a
// container runtime does before it execs the container's program) still
// takes the agent into the program it execs. Before the program changes
// its root, the agent opens the directories of its own file, of the
// libraries it needs besides the C library, and of dprobe's socket
// (O_PATH, registered: the program's close_range steps around them). An
// exec from where those paths no longer reach passes them through
// /proc/self/fd/N instead:
//
//   LD_PRELOAD=/proc/self/fd/1001/libZydis.so.4.0:/proc/self/fd/1000/libdprobe_agent.so
//   DPROBE_CONTROL=/proc/self/fd/1002/ctl   DPROBE_DIRS=1000,1001,1002
//
// with those descriptors left open across the exec. The agent in the new
// program takes them over (DPROBE_DIRS) where they are, and passes them on
// the same way. /proc must be mounted in the new root (every container
// runtime mounts it).
#ifndef DPROBE_AGENT_HELD_DIRECTORIES_H_
#define DPROBE_AGENT_HELD_DIRECTORIES_H_

#include <cstddef>
#include <string>

namespace dprobe::agent {

inline constexpr const char* kDirsEnv = "DPROBE_DIRS";

// At start-up, with the agent's path and the control socket's: takes over
// the directories the exec that started this program handed over
// (DPROBE_DIRS); `follow`: keeps those open across every exec (children
// the program starts by its own paths, posix_spawn, find them in the
// environment they inherit).
void prepare_held_directories(const std::string& agent, const std::string& control, bool follow);

// Before the program changes its root (chroot, pivot_root), while the
// paths still reach: opens the directories. Until then none is held, and
// the program sees no descriptor of the agent's for them.
void hold_directories_now();

// Whether an exec must pass the held directories: the agent came through
// them, or its path no longer reaches from this root.
bool exec_needs_held_directories();

// Whether they reach from here: /proc is mounted in this root (a bare
// chroot has none; the program then runs untraced, and nothing is said
// on its stderr).
bool held_directories_reach();

// The bytes the three entries take, and writing them; each returns the
// end of what it wrote (its NUL). Stack only: a vfork child runs these.
size_t held_entries_size();
char* write_held_preload(char* text);
char* write_held_control(char* text);
char* write_held_list(char* text);

// Leaves the held descriptors open across the coming exec; after one that
// failed, back as they were (open across every exec only when handed over
// with --follow).
void open_held_for_exec();
void rest_held_after_failed_exec();

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_HELD_DIRECTORIES_H_
