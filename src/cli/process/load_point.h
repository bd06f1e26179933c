// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// When a stopped process may be made to call dlopen (how `dprobe attach`
// loads the agent): the dynamic loader idle (its r_debug says
// RT_CONSISTENT: no load or unload under way, which a nested dlopen would
// trip over), and the main thread, which makes the call, neither inside the
// loader nor running C library code, where it may hold a lock that dlopen
// takes too (malloc's). Blocked in a system call is fine.
//
// A load or unload seen under way (by r_state, or the thread inside the
// loader) is never interrupted: the loader asserts (or worse) when a
// nested dlopen changes its lists under it. (The constructors of a library
// being loaded run with r_state consistent again and are not told apart.) Running C
// library code is only a risk of waiting on a lock, which the call's
// timeout bounds, so a process that is never seen outside it is taken as
// it is once the patience is out.
//
//   auto process = stop_at_load_point(pid, std::chrono::seconds(10), g_stop);
#ifndef DPROBE_CLI_PROCESS_LOAD_POINT_H_
#define DPROBE_CLI_PROCESS_LOAD_POINT_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <vector>

#include "base/result.h"
#include "cli/process/process_maps.h"
#include "cli/process/traced_process.h"

namespace dprobe::cli {

class LoadPoint {
 public:
  // Finds the loader, the C library and r_debug in the process.
  static Result<LoadPoint> of(pid_t pid);

  enum class Stop {
    kLoaderBusy,  // a load or unload under way, or the main thread in the loader
    kUnsure,      // the main thread runs C library code outside a system call, or
                  // in one the allocator makes (mmap, munmap, madvise, brk, ...),
                  // or where it is cannot be read
    kReached,
  };
  Stop classify(const TracedProcess& process) const;

 private:
  LoadPoint() = default;
  bool inside(const std::vector<AddressRange>& ranges, uint64_t pc) const;

  std::vector<AddressRange> loader_;
  std::vector<AddressRange> libc_;
  uint64_t r_state_ = 0;  // address of _r_debug.r_state
};

// Stops every thread at a load point: stops, looks, lets the process go
// and tries again a moment later, for up to `patience`; past that, the
// first stop with the loader idle (the call is then protected by its
// timeout only), and a failure once a second `patience` has passed without
// one. Gives up, having changed nothing, when `cancelled` is set (Ctrl-C).
Result<TracedProcess> stop_at_load_point(pid_t pid, std::chrono::milliseconds patience,
                                         const std::atomic<bool>& cancelled);
bool is_libc(const std::string& path);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_LOAD_POINT_H_
