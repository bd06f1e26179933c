// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/namespace_ids.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <string>

namespace dprobe::cli {

pid_t innermost_id(std::string_view nspid_line) {
  constexpr std::string_view kKey = "NSpid:";
  if (nspid_line.substr(0, kKey.size()) != kKey) return -1;
  const size_t end = nspid_line.find_last_not_of(" \t");
  if (end == std::string_view::npos || end < kKey.size()) return -1;
  const size_t begin = nspid_line.find_last_of(" \t", end) + 1;
  pid_t id = -1;
  const char* first = nspid_line.data() + begin;
  const char* last = nspid_line.data() + end + 1;
  const auto [stopped, error] = std::from_chars(first, last, id);
  return error == std::errc() && stopped == last && id > 0 ? id : -1;
}

namespace {

pid_t inner_id_of(const std::filesystem::path& task) {
  std::ifstream status(task / "status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("NSpid:", 0) == 0) return innermost_id(line);
  }
  return -1;
}

}  // namespace

std::set<pid_t> host_thread_ids(pid_t pid, std::span<const uint32_t> inner) {
  std::set<pid_t> host;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const pid_t inner_id = inner_id_of(task.path());
    if (inner_id > 0 &&
        std::find(inner.begin(), inner.end(), static_cast<uint32_t>(inner_id)) != inner.end()) {
      host.insert(static_cast<pid_t>(std::stol(task.path().filename().string())));
    }
  }
  return host;
}

}  // namespace dprobe::cli
