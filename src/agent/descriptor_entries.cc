// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// What `dprobe attach` calls in a process whose root is not dprobe's (a
// container), which loads the attach hook from a memfd of its own as
// /proc/self/fd/N (cli/process/agent_delivery.h). Both run as the agent's
// own work: no probe and no system-call event counts them.
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "agent/hit/thread_trace.h"

namespace dprobe::agent {
namespace {

struct NameQuery {
  char name[32];
  bool found;
};

int compare_name(dl_phdr_info* info, size_t, void* data) {
  auto* query = static_cast<NameQuery*>(data);
  if (info->dlpi_name != nullptr && std::strcmp(info->dlpi_name, query->name) == 0) {
    query->found = true;
  }
  return query->found ? 1 : 0;
}

// Whether a loaded object is named /proc/self/fd/`fd`: the loader takes a
// name it knows for the object it already has, and would not load the hook.
bool names_a_loaded_object(int fd) {
  NameQuery query{};
  std::snprintf(query.name, sizeof(query.name), "/proc/self/fd/%d", fd);
  ::dl_iterate_phdr(compare_name, &query);
  return query.found;
}

// Linux's default limit of a process's descriptors is far above this.
constexpr int kMaxSearch = 256;

}  // namespace
}  // namespace dprobe::agent

// `fd`, or a duplicate of it under a number no loaded object is named by
// (`fd` closed then); -1 if none was found.
extern "C" __attribute__((visibility("default"))) int dprobe_agent_fresh_descriptor(int fd) {
  using namespace dprobe::agent;
  const AgentWork work;
  int candidate = fd;
  for (int tries = 0; tries < kMaxSearch; ++tries) {
    if (!names_a_loaded_object(candidate)) {
      if (candidate != fd) ::close(fd);
      return candidate;
    }
    const int next = ::fcntl(fd, F_DUPFD_CLOEXEC, candidate + 1);
    if (candidate != fd) ::close(candidate);
    if (next < 0) return -1;
    candidate = next;
  }
  if (candidate != fd) ::close(candidate);
  return -1;
}

// Closes the descriptor the hook was loaded from, once the session is on.
extern "C" __attribute__((visibility("default"))) int dprobe_agent_close_descriptor(int fd) {
  const dprobe::agent::AgentWork work;
  return ::close(fd);
}
