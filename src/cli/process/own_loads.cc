// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/own_loads.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <algorithm>

#include "symbols/elf_file.h"

namespace dprobe::cli {
namespace {

bool is_descriptor_call(uint64_t nr) {
  switch (nr) {
    case SYS_read:
    case SYS_pread64:
    case SYS_fstat:
    case SYS_newfstatat:  // (fd, "", AT_EMPTY_PATH): the loader's fstat
    case SYS_close:
      return true;
    default:
      return false;
  }
}

std::string_view file_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_error(int64_t result) { return result < 0 && result >= -4095; }

}  // namespace

bool OwnLoads::own_path(std::string_view path) const {
  return std::any_of(names_.begin(), names_.end(), [&](const std::string& name) {
    return name.starts_with('/') ? path == name : file_name(path) == name;
  });
}

bool OwnLoads::own_address(uint64_t address) const {
  return std::any_of(ranges_.begin(), ranges_.end(), [&](const auto& range) {
    return address >= range.first && address < range.second;
  });
}

bool OwnLoads::is_own(const StartupCall& call) const {
  if (call.nr == SYS_openat) return own_path(call.path);
  if (is_descriptor_call(call.nr)) return descriptors_.contains(call.args[0]);
  if (call.nr == SYS_mmap) {
    if (descriptors_.contains(call.args[4])) return true;
    return (call.args[3] & MAP_FIXED) != 0 && own_address(call.args[0]);
  }
  if (call.nr == SYS_mprotect || call.nr == SYS_munmap) return own_address(call.args[0]);
  return false;
}

void OwnLoads::made(const StartupCall& call, int64_t result) {
  if (is_error(result)) return;
  if (call.nr == SYS_openat) {
    descriptors_.insert(static_cast<uint64_t>(result));
  } else if (call.nr == SYS_close) {
    descriptors_.erase(call.args[0]);
  } else if (call.nr == SYS_mmap && (call.args[3] & MAP_FIXED) == 0) {
    // The reservation: the object's later mappings go inside it.
    const auto begin = static_cast<uint64_t>(result);
    ranges_.emplace_back(begin, begin + call.args[1]);
  }
}

std::vector<std::string> own_objects(const std::string& agent, const std::string& executable) {
  std::vector<std::string> own{agent};
  auto agent_elf = symbols::ElfFile::open(agent);
  if (!agent_elf) return own;
  std::vector<std::string> programs{"libc.so.6"};
  if (auto program = symbols::ElfFile::open(executable)) {
    for (const std::string& name : program->needed()) programs.push_back(name);
  }
  for (const std::string& name : agent_elf->needed()) {
    if (std::find(programs.begin(), programs.end(), name) == programs.end()) own.push_back(name);
  }
  return own;
}

}  // namespace dprobe::cli
