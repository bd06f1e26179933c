// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// /proc/PID/maps, for `dprobe attach`: where a process has mapped a file,
// to find functions in it (dlopen in its C library, the agent's entry).
//
//   auto libc = find_mapped_file(pid, [](const std::string& path) { return is_libc(path); });
//   auto dlopen = function_in(*libc, "dlopen");   // its address in the process
#ifndef DPROBE_CLI_PROCESS_PROCESS_MAPS_H_
#define DPROBE_CLI_PROCESS_PROCESS_MAPS_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace dprobe::cli {

struct MappedFile {
  std::string path;  // as /proc/PID/maps names it
  std::string file;  // where dprobe opens it: /proc/PID/map_files/..., or `path`
  uint64_t bias;     // run-time address minus link-time address
};

// The first file mapped by the process whose path `wanted` accepts.
std::optional<MappedFile> find_mapped_file(pid_t pid,
                                           const std::function<bool(const std::string&)>& wanted);

// The address of `function` (a dynamic symbol of `file`) in the process.
Result<uint64_t> function_in(const MappedFile& file, const std::string& function);
// The address of the data object `variable` of `file` in the process.
Result<uint64_t> variable_in(const MappedFile& file, const std::string& variable);

struct AddressRange {
  uint64_t begin;
  uint64_t end;
  bool contains(uint64_t address) const { return address >= begin && address < end; }
};

// The executable mappings of the file at `path` in the process.
std::vector<AddressRange> executable_ranges(pid_t pid, const std::string& path);

}  // namespace dprobe::cli

#endif  // DPROBE_CLI_PROCESS_PROCESS_MAPS_H_
