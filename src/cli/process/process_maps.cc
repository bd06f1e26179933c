// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/process_maps.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "symbols/elf_file.h"
#include "symbols/symbol_table.h"

namespace dprobe::cli {
namespace {

struct MapLine {
  uint64_t start;
  uint64_t end;
  uint64_t offset;
  bool executable;
  std::string path;
};

std::optional<MapLine> parse_line(const std::string& line) {
  std::istringstream in(line);
  std::string range, perms, offset, device, inode, path;
  if (!(in >> range >> perms >> offset >> device >> inode)) return std::nullopt;
  std::getline(in >> std::ws, path);
  if (path.empty() || path[0] != '/') return std::nullopt;
  MapLine parsed;
  parsed.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
  parsed.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
  parsed.executable = perms.size() > 2 && perms[2] == 'x';
  parsed.offset = std::stoull(offset, nullptr, 16);
  parsed.path = path;
  return parsed;
}

// The process's memory map. A main thread that has exited (pthread_exit,
// while other threads run on) shows an empty one: any live thread's is the
// same map.
std::ifstream open_maps(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream maps(proc + "/maps");
  if (maps.peek() != std::ifstream::traits_type::eof()) return maps;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(proc + "/task", ec)) {
    std::ifstream of_thread(task.path() / "maps");
    if (of_thread.peek() != std::ifstream::traits_type::eof()) return of_thread;
  }
  return maps;
}

}  // namespace

std::optional<MappedFile> find_mapped_file(pid_t pid,
                                           const std::function<bool(const std::string&)>& wanted) {
  std::ifstream maps = open_maps(pid);
  std::string line;
  while (std::getline(maps, line)) {
    const auto parsed = parse_line(line);
    // The mapping of the file's start: the ELF header, at the object's base.
    if (!parsed || parsed->offset != 0 || !wanted(parsed->path)) continue;
    // The very file mapped, wherever the process's root is (a container's
    // path may name another file here, or none); its path where
    // map_files is closed to us (it needs CAP_SYS_ADMIN).
    char range[40];
    std::snprintf(range, sizeof(range), "%" PRIx64 "-%" PRIx64, parsed->start, parsed->end);
    std::string file = "/proc/" + std::to_string(pid) + "/map_files/" + range;
    auto elf = symbols::ElfFile::open(file);
    if (!elf) elf = symbols::ElfFile::open(file = parsed->path);
    if (!elf) continue;
    const auto vaddr = elf->vaddr_of_file_offset(0);
    return MappedFile{parsed->path, file, parsed->start - vaddr.value_or(0)};
  }
  return std::nullopt;
}

Result<uint64_t> function_in(const MappedFile& file, const std::string& function) {
  auto elf = symbols::ElfFile::open(file.file);
  if (!elf) return fail(file.path + ": not an ELF object");
  const symbols::SymbolTable table(*elf);
  const auto found = table.find(function);
  if (found.empty()) return fail(function + " is not in " + file.path);
  return file.bias + found.front().address;
}

Result<uint64_t> variable_in(const MappedFile& file, const std::string& variable) {
  auto elf = symbols::ElfFile::open(file.file);
  if (!elf) return fail(file.path + ": not an ELF object");
  for (const symbols::FunctionSymbol& symbol : elf->variables()) {
    if (symbol.name == variable) return file.bias + symbol.address;
  }
  return fail(variable + " is not in " + file.path);
}

std::vector<AddressRange> executable_ranges(pid_t pid, const std::string& path) {
  std::vector<AddressRange> ranges;
  std::ifstream maps = open_maps(pid);
  std::string line;
  while (std::getline(maps, line)) {
    const auto parsed = parse_line(line);
    if (parsed && parsed->executable && parsed->path == path) {
      ranges.push_back({parsed->start, parsed->end});
    }
  }
  return ranges;
}

}  // namespace dprobe::cli
