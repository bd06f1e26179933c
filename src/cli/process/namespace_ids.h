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

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_NAMESPACE_IDS_H_
