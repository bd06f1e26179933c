// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Thread ids as a process in its own PID namespace knows them, turned into
// the ids dprobe (in the host's namespace) uses. The agent says which of
// its threads are its own by the ids it sees (gettid): in a container
// those are the namespace's, where 1 is the container's first process.
//
//   const std::set<pid_t> host = host_thread_ids(pid, {1, 7});
#ifndef DPROBE_CLI_PROCESS_NAMESPACE_IDS_H_
#define DPROBE_CLI_PROCESS_NAMESPACE_IDS_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string_view>

namespace dprobe::cli {

// The innermost id of the NSpid field of /proc/PID/task/TID/status ("4242
// 1": 1, the thread's id in its own namespace; alone, the namespace is
// dprobe's). -1 when the field holds none.
pid_t innermost_id(std::string_view nspid);

// The host ids of the threads of `pid` whose ids in its own namespace are
// `inner`; an id no thread has is left out.
std::set<pid_t> host_thread_ids(pid_t pid, std::span<const uint32_t> inner);

// The ids the agent writes in its records (its own namespace's: getpid,
// gettid) as the kernel's trace shows them, the host's. The threads of the
// process are looked up when an id comes that is not known yet (its first
// record, the thread's name, comes at its first hit, while it runs); a
// thread gone by then keeps its namespace id.
//
//   HostIds ids(session.pid(), session.own_pid());
//   if (ids.translates()) header.tid = ids.host_tid(header.tid);
class HostIds {
 public:
  HostIds(pid_t host_pid, uint32_t own_pid) : host_pid_(host_pid), own_pid_(own_pid) {}
  // Whether the process has a PID namespace of its own (else its ids are
  // the host's already).
  bool translates() const { return host_pid_ > 0 && static_cast<uint32_t>(host_pid_) != own_pid_; }
  uint32_t host_pid() const { return static_cast<uint32_t>(host_pid_); }
  uint32_t host_tid(uint32_t own_tid);

 private:
  void look_up_threads();

  pid_t host_pid_;
  uint32_t own_pid_;
  std::map<uint32_t, uint32_t> host_of_;  // own tid -> host tid
};

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_NAMESPACE_IDS_H_
