// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A thread's id in its own PID namespace, from /proc's NSpid line, and the
// host ids of the agent's threads named that way (cli/process/namespace_ids.h).
#include "cli/process/namespace_ids.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cli/process/proc_status.h"

namespace dprobe::cli {
namespace {

TEST(NamespaceIds, TheInnermostIdOfAnNspidField) {
  EXPECT_EQ(innermost_id("4242\t1"), 1) << "pid 1 of its own namespace";
  EXPECT_EQ(innermost_id("4242\t77\t3"), 3) << "two namespaces deep";
  EXPECT_EQ(innermost_id("4242"), 4242) << "in dprobe's own namespace";
  EXPECT_EQ(innermost_id("12\t3 "), 3) << "a trailing blank";
  EXPECT_EQ(innermost_id(""), -1) << "no NSpid field (status_field's answer)";
  EXPECT_EQ(innermost_id("x"), -1);
  EXPECT_EQ(innermost_id("0"), -1);
  EXPECT_EQ(innermost_id("12\t3x"), -1);
}

// The field as status_field reads it from this thread's status.
TEST(NamespaceIds, ThisThreadsOwnStatusGivesItsId) {
  const auto self = static_cast<pid_t>(::syscall(SYS_gettid));
  const std::string task = "/proc/self/task/" + std::to_string(self);
  EXPECT_EQ(innermost_id(status_field(task, "NSpid")), self);
  EXPECT_EQ(status_field(task, "NSpi"), "") << "a key is matched whole";
}

// In dprobe's own namespace the ids are the host's: this thread is found
// by its own id, an id no thread has is left out.
TEST(NamespaceIds, HostIdsOfThisProcesssThreads) {
  const auto self = static_cast<uint32_t>(::syscall(SYS_gettid));
  const std::vector<uint32_t> inner{self, 0x7ffffff0u};
  EXPECT_EQ(host_thread_ids(::getpid(), inner), std::set<pid_t>{static_cast<pid_t>(self)});
  EXPECT_TRUE(host_thread_ids(::getpid(), {}).empty());
}

// A process of dprobe's own namespace needs no translation; one whose own
// pid differs has it: its pid is the host's, a thread is found by its
// innermost id, and an id no thread has stays as it is.
TEST(HostIds, TranslatesOnlyWhereTheNamespaceDiffers) {
  const auto self = static_cast<uint32_t>(::syscall(SYS_gettid));
  const auto pid = static_cast<uint32_t>(::getpid());
  EXPECT_FALSE(HostIds(::getpid(), pid).translates());
  HostIds ids(::getpid(), 0x7ffffff1u);
  EXPECT_TRUE(ids.translates());
  EXPECT_EQ(ids.host_pid(), pid);
  EXPECT_EQ(ids.host_tid(0x7ffffff1u), pid) << "its own pid is the process's";
  EXPECT_EQ(ids.host_tid(self), self) << "innermost ids here are the host's";
  EXPECT_EQ(ids.host_tid(0x7ffffff0u), 0x7ffffff0u) << "a thread gone keeps its id";
}

}  // namespace
}  // namespace dprobe::cli
