// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/load_point.h"

#include <link.h>
#include <sys/syscall.h>

#include <cstddef>
#include <fstream>
#include <string>
#include <thread>

namespace dprobe::cli {
namespace {

constexpr auto kRetryPause = std::chrono::milliseconds(2);

bool is_loader(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  return base.rfind("ld-linux", 0) == 0 || base.rfind("ld-", 0) == 0;
}

// The system calls malloc and the thread stack cache make in the middle
// of their work (their lists and the thread's tcache half-updated): a
// thread waiting in one of them must not be made to call dlopen, which
// allocates.
bool in_allocator_call(pid_t pid, pid_t tid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall");
  long nr = -1;
  if (!(file >> nr)) return true;  // unknown: as if it were
  for (const long busy : {SYS_mmap, SYS_munmap, SYS_mremap, SYS_madvise, SYS_mprotect, SYS_brk}) {
    if (nr == busy) return true;
  }
  return false;
}

}  // namespace

bool is_libc(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  return base.rfind("libc.so", 0) == 0 || base.rfind("libc-", 0) == 0;
}

Result<LoadPoint> LoadPoint::of(pid_t pid) {
  const auto loader = find_mapped_file(pid, is_loader);
  const auto libc = find_mapped_file(pid, is_libc);
  if (!loader || !libc) return fail("the process has no dynamic loader or C library mapped");
  auto debug = variable_in(*loader, "_r_debug");
  if (!debug) return unexpected(debug.error());
  LoadPoint point;
  point.loader_ = executable_ranges(pid, loader->path);
  point.libc_ = executable_ranges(pid, libc->path);
  point.r_state_ = *debug + offsetof(struct r_debug, r_state);
  return point;
}

bool LoadPoint::inside(const std::vector<AddressRange>& ranges, uint64_t pc) const {
  for (const AddressRange& range : ranges) {
    if (range.contains(pc)) return true;
  }
  return false;
}

LoadPoint::Stop LoadPoint::classify(const TracedProcess& process) const {
  int state = -1;
  if (!process.read(r_state_, &state, sizeof(state))) return Stop::kUnsure;
  if (state != r_debug::RT_CONSISTENT) return Stop::kLoaderBusy;
  auto stop = process.main_stop_point();
  if (!stop) return Stop::kUnsure;
  if (inside(loader_, stop->pc)) return Stop::kLoaderBusy;
  if (!inside(libc_, stop->pc)) return Stop::kReached;
  // In the C library: only a system call, and not one the allocator makes.
  return stop->in_system_call && !in_allocator_call(process.pid(), process.caller())
             ? Stop::kReached
             : Stop::kUnsure;
}

Result<TracedProcess> stop_at_load_point(pid_t pid, std::chrono::milliseconds patience,
                                         const std::atomic<bool>& cancelled) {
  auto point = LoadPoint::of(pid);
  if (!point) return unexpected(point.error());
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    if (cancelled.load()) return fail("interrupted before the agent was loaded; nothing changed");
    auto process = TracedProcess::stop(pid);
    if (!process) return process;
    const LoadPoint::Stop stop = point->classify(*process);
    if (stop == LoadPoint::Stop::kReached) return process;
    const auto waited = std::chrono::steady_clock::now() - start;
    // Running C library code is only a risk of waiting on a lock, which
    // the call's timeout bounds; a load under way is never interrupted.
    if (stop == LoadPoint::Stop::kUnsure && waited >= patience) return process;
    process->detach();
    if (waited >= 2 * patience) {
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(waited).count();
      return fail("process " + std::to_string(pid) + " was loading or unloading a library at " +
                  "every stop of the last " + std::to_string(seconds / 2) +
                  " s: the agent cannot be loaded in the middle of that; try again");
    }
    std::this_thread::sleep_for(kRetryPause);
  }
}

}  // namespace dprobe::cli
