// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The processes a traced process starts, and theirs, while a trace runs
// without --follow: they run with no probes, and the user is told at the
// end how many and which programs (a probe on a library only a child of
// `sh -c` loads records nothing otherwise, silently).
//
// The kernel's process events (the proc connector: every fork, exec and
// exit as it happens, CAP_NET_ADMIN) see each child however short its
// life; without that capability /proc is polled for the children of the
// processes known, which misses a child that lives less than a poll. A
// child's name is read from /proc when it execs: one already gone keeps
// its parent's.
//
//   ChildWatch children(root_pid);
//   ... trace ...
//   const UntracedChildren seen = children.stop();
//   errors << untraced_children_message(seen);
#ifndef DPROBE_CLI_PROCESS_CHILD_WATCH_H_
#define DPROBE_CLI_PROCESS_CHILD_WATCH_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dprobe::cli {

struct UntracedChildren {
  size_t count = 0;
  std::vector<std::string> names;  // distinct, in the order first seen
};

class ChildWatch {
 public:
  // `process_events`: try the kernel's first (false: poll /proc only).
  explicit ChildWatch(pid_t root, bool process_events = true);
  ~ChildWatch();
  ChildWatch(const ChildWatch&) = delete;
  ChildWatch& operator=(const ChildWatch&) = delete;

  // Ends the watch (once); every descendant of the root seen until then.
  UntracedChildren stop();

 private:
  void watch_events(int socket);
  void poll_proc();
  void forked(pid_t parent, pid_t child);
  void execed(pid_t pid);
  void exited(pid_t pid);

  pid_t root_;
  // Touched by the watching thread only, until stop() has joined it.
  std::set<pid_t> live_;            // the root and its descendants alive
  std::map<pid_t, size_t> index_;   // a live descendant's entry in names_
  std::vector<std::string> names_;  // one per descendant: its last program
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// "dprobe: 3 child processes ran untraced (sqlite3, sh); --follow traces
// them\n", or "" when none did.
std::string untraced_children_message(const UntracedChildren& children);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_CHILD_WATCH_H_
