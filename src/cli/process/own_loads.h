// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Which of the dynamic loader's system calls load dprobe's own objects into
// the program: the preloaded agent and the libraries only the agent needs.
// They are dprobe's doing, not the program's, and a count of the program's
// start-up calls (startup_syscalls.h) leaves them out. The loader opens an
// object, reads and maps it through the descriptor, closes it, then maps
// and protects parts of the range it reserved: each of those is known by
// the descriptor it names or the address it falls in.
//
//   OwnLoads own({"/usr/lib/dprobe/libdprobe_agent.so", "libZydis.so.4.0"});
//   const bool skip = own.is_own(call);   // at the call's entry
//   own.made(call, result);               // at its exit
#ifndef DPROBE_CLI_PROCESS_OWN_LOADS_H_
#define DPROBE_CLI_PROCESS_OWN_LOADS_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dprobe::cli {

// A system call as the collector sees it at its entry (host numbers).
struct StartupCall {
  uint64_t nr = 0;
  uint64_t args[6] = {};
  std::string path;  // what openat's path argument names; empty for other calls
};

class OwnLoads {
 public:
  // Paths (absolute: matched whole) and file names (matched against the
  // last part of a path) of the objects that are dprobe's.
  explicit OwnLoads(std::vector<std::string> names) : names_(std::move(names)) {}

  bool is_own(const StartupCall& call) const;
  // After an own call returned `result` (a raw result: -errno on failure).
  void made(const StartupCall& call, int64_t result);

 private:
  bool own_path(std::string_view path) const;
  bool own_address(uint64_t address) const;

  std::vector<std::string> names_;
  std::set<uint64_t> descriptors_;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // [begin, end) reserved for them
};

// dprobe's own objects for a program: the agent, and those of its DT_NEEDED
// libraries that neither the C library nor the executable's own DT_NEEDED
// list names (a program that needs one of them itself loads it anyway).
std::vector<std::string> own_objects(const std::string& agent, const std::string& executable);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_OWN_LOADS_H_
