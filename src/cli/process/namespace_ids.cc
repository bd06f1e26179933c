// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/namespace_ids.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string>

#include "cli/process/proc_status.h"

namespace dprobe::cli {

pid_t innermost_id(std::string_view nspid) {
  const size_t end = nspid.find_last_not_of(" \t");
  if (end == std::string_view::npos) return -1;
  const size_t begin = nspid.find_last_of(" \t", end) + 1;
  pid_t id = -1;
  const char* first = nspid.data() + begin;
  const char* last = nspid.data() + end + 1;
  const auto [stopped, error] = std::from_chars(first, last, id);
  return error == std::errc() && stopped == last && id > 0 ? id : -1;
}

namespace {

// Each thread of `pid`: its id in its own namespace, and its host id.
std::map<uint32_t, uint32_t> threads_by_own_id(pid_t pid) {
  std::map<uint32_t, uint32_t> threads;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const pid_t own = innermost_id(status_field(task.path().string(), "NSpid"));
    if (own > 0) {
      threads[static_cast<uint32_t>(own)] =
          static_cast<uint32_t>(std::stoul(task.path().filename().string()));
    }
  }
  return threads;
}

}  // namespace

std::set<pid_t> host_thread_ids(pid_t pid, std::span<const uint32_t> inner) {
  std::set<pid_t> host;
  for (const auto& [own, host_id] : threads_by_own_id(pid)) {
    if (std::find(inner.begin(), inner.end(), own) != inner.end()) {
      host.insert(static_cast<pid_t>(host_id));
    }
  }
  return host;
}

uint32_t HostIds::host_tid(uint32_t own_tid) {
  if (own_tid == own_pid_) return host_pid();
  auto known = host_of_.find(own_tid);
  if (known == host_of_.end()) {
    look_up_threads();
    known = host_of_.find(own_tid);
    if (known == host_of_.end()) known = host_of_.emplace(own_tid, own_tid).first;  // gone
  }
  return known->second;
}

void HostIds::look_up_threads() {
  // A reused id names the thread that has it now.
  for (const auto& [own, host_id] : threads_by_own_id(host_pid_)) host_of_[own] = host_id;
}

}  // namespace dprobe::cli
