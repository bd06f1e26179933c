// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Children the program starts are not traced unless followed: the agent
// takes itself (LD_PRELOAD's entry, DPROBE_CONTROL, DPROBE_FOLLOW) out of
// the environment they inherit (an exec of the traced process itself puts
// it back, see exec.cc), and out of the block the kernel placed above the
// stack at exec, which /proc/PID/environ shows: the strings that stay are
// moved together and the block ends after them (prctl PR_SET_MM_MAP), so
// that the file holds what the program's own environment holds, byte for
// byte, `env -i` included.
//
//   if (!follow_children()) scrub_environment(agent_path());
#ifndef DPROBE_AGENT_ENVIRONMENT_H_
#define DPROBE_AGENT_ENVIRONMENT_H_

#include <string>
#include <string_view>
#include <vector>

namespace dprobe::agent {

// At start-up, while the program has no other thread.
void scrub_environment(const std::string& agent_path);

// LD_PRELOAD without the agent: "" when nothing else was preloaded.
std::string preload_without(std::string_view preload, const std::string& agent_path);

// Where a string of the block went when the block was packed.
struct MovedEntry {
  const char* from;
  char* to;
};

// Packs an environment block ("A=1\0B=2\0..." in [begin, end)) in place:
// the agent's entries go (LD_PRELOAD stays as "LD_PRELOAD=kept" where it
// was, when the user preloaded more), the others move down over them in
// order, and the rest is zeroed. Returns where each string that stayed
// went; `used` is the bytes the block holds now.
std::vector<MovedEntry> pack_environment(char* begin, char* end, const std::string& kept,
                                         size_t& used);

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_ENVIRONMENT_H_
