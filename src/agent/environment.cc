// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/environment.h"

#include <fcntl.h>
#include <linux/prctl.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "agent/agent.h"
#include "agent/held_directories.h"
#include "arch/runtime/raw_syscall.h"

extern char** environ;

namespace dprobe::agent {
namespace {

// The fields of /proc/self/stat that lay out the process's memory
// (proc(5): startcode is the 26th, env_end the 51st), as prctl's
// PR_SET_MM_MAP takes them.
// Read with the agent's own calls: the C library's stdio would allocate
// from the program's heap before the program does (own_heap.h).
std::optional<prctl_mm_map> memory_layout() {
  const long fd = arch::raw_syscall(SYS_openat, AT_FDCWD, arch::raw_arg("/proc/self/stat"),
                                    O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[1024] = {};
  const long n = arch::raw_syscall(SYS_read, fd, arch::raw_arg(text), sizeof(text) - 1);
  arch::raw_syscall(SYS_close, fd);
  if (n <= 0) return std::nullopt;
  text[n] = '\0';
  const char* rest = std::strrchr(text, ')');  // the command may hold spaces and ')'
  if (rest == nullptr) return std::nullopt;
  std::vector<unsigned long long> field(52, 0);  // field[k]: the k-th of the line
  for (size_t number = 3; number <= 51; ++number) {
    rest = std::strchr(rest + 1, ' ');
    if (rest == nullptr) return std::nullopt;
    field[number] = std::strtoull(rest + 1, nullptr, 10);  // state (3) reads as 0
  }
  prctl_mm_map map{};
  map.start_code = field[26];
  map.end_code = field[27];
  map.start_stack = field[28];
  map.start_data = field[45];
  map.end_data = field[46];
  map.start_brk = field[47];
  map.arg_start = field[48];
  map.arg_end = field[49];
  map.env_start = field[50];
  map.env_end = field[51];
  map.exe_fd = static_cast<uint32_t>(-1);  // the executable stays
  if (map.env_start == 0 || map.env_start >= map.env_end) return std::nullopt;
  return map;
}

bool agents_entry(std::string_view entry) {
  // Only DPROBE_CONTROL, DPROBE_FOLLOW and DPROBE_DIRS are the agent's
  // among DPROBE_*.
  for (const std::string_view name :
       {"LD_PRELOAD=", "DPROBE_CONTROL=", "DPROBE_FOLLOW=", "DPROBE_DIRS="}) {
    if (entry.starts_with(name)) return true;
  }
  return false;
}

}  // namespace

std::vector<MovedEntry> pack_environment(char* begin, char* end, const std::string& kept,
                                         size_t& used) {
  std::string packed;
  std::vector<size_t> offsets;
  std::vector<const char*> sources;
  for (const char* entry = begin; entry < end;) {
    const std::string_view text(entry, strnlen(entry, static_cast<size_t>(end - entry)));
    const char* next = entry + text.size() + 1;
    std::string_view stays = text;
    std::string preload;
    if (agents_entry(text)) {
      if (!text.starts_with("LD_PRELOAD=") || kept.empty()) {
        entry = next;
        continue;
      }
      preload = "LD_PRELOAD=" + kept;
      stays = preload;
    }
    offsets.push_back(packed.size());
    sources.push_back(entry);
    packed.append(stays);
    packed.push_back('\0');
    entry = next;
  }
  used = std::min(packed.size(), static_cast<size_t>(end - begin));
  std::memcpy(begin, packed.data(), used);
  std::memset(begin + used, 0, static_cast<size_t>(end - begin) - used);
  std::vector<MovedEntry> moved;
  for (size_t i = 0; i < sources.size(); ++i) moved.push_back({sources[i], begin + offsets[i]});
  return moved;
}

namespace {

// The program's environ pointed into the block: it points where the
// strings went.
void follow_moves(const std::vector<MovedEntry>& moved) {
  if (environ == nullptr) return;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    for (const MovedEntry& move : moved) {
      if (*entry == move.from) {
        *entry = move.to;
        break;
      }
    }
  }
}

// The block now ends after its last string: /proc/PID/environ shows no
// trailing NULs. Where the kernel does not allow it (no checkpoint/restore
// support), the zeroed tail stays.
void end_block(prctl_mm_map map, uint64_t env_end) {
  map.env_end = env_end;
  map.brk =
      static_cast<uint64_t>(arch::raw_syscall(SYS_brk, 0));  // read last: nothing allocates after
  (void)arch::raw_syscall(SYS_prctl, PR_SET_MM, PR_SET_MM_MAP, arch::raw_arg(&map), sizeof(map), 0);
}

}  // namespace

std::string preload_without(std::string_view preload, const std::string& agent_path) {
  std::string kept;
  std::string_view rest(preload);
  while (!rest.empty()) {
    const size_t end = rest.find_first_of(": ");
    const std::string_view entry = rest.substr(0, end);
    // The agent's libraries, passed through held directories
    // (held_directories.h), are the agent's too.
    const bool agents = entry == agent_path || entry.starts_with("/proc/self/fd/");
    if (!entry.empty() && !agents) kept += (kept.empty() ? "" : ":") + std::string(entry);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  return kept;
}

void scrub_environment(const std::string& agent_path) {
  const char* preload = std::getenv("LD_PRELOAD");
  const std::string kept = preload != nullptr ? preload_without(preload, agent_path) : "";
  // unsetenv takes entries out in place; setenv would allocate from the
  // program's heap, so the preload list the program had is written over
  // the entry itself (it is never longer).
  ::unsetenv(kControlEnv);
  ::unsetenv(kFollowEnv);
  ::unsetenv(kDirsEnv);
  if (kept.empty()) ::unsetenv("LD_PRELOAD");
  const std::optional<prctl_mm_map> layout = memory_layout();
  if (!layout) {
    if (!kept.empty() && preload != nullptr) {
      std::memcpy(const_cast<char*>(preload), kept.c_str(), kept.size() + 1);
    }
    return;
  }
  auto* begin = reinterpret_cast<char*>(layout->env_start);
  auto* end = reinterpret_cast<char*>(layout->env_end);
  size_t used = 0;
  follow_moves(pack_environment(begin, end, kept, used));
  end_block(*layout, layout->env_start + used);
}

}  // namespace dprobe::agent
