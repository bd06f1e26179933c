// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/loaded_objects.h"

#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <string>

namespace dprobe::agent {
namespace {

std::string executable_path() {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink("/proc/thread-self/exe", buffer, sizeof(buffer) - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

struct Collected {
  std::vector<MappedObject> objects;
  bool first = true;
};

int collect(dl_phdr_info* info, size_t, void* data) {
  auto& collected = *static_cast<Collected*>(data);
  MappedObject mapped;
  protocol::LoadedObject& object = mapped.object;
  // The loader names the executable "", and the vDSO by a name no file has.
  object.is_main = collected.first;
  collected.first = false;
  object.path = object.is_main ? executable_path() : std::string(info->dlpi_name);
  object.bias = info->dlpi_addr;
  struct stat st {};
  if (object.path.empty() || ::stat(object.path.c_str(), &st) != 0) return 0;
  object.dev = st.st_dev;
  object.ino = st.st_ino;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    const uint64_t begin = info->dlpi_addr + ph.p_vaddr;
    mapped.text.push_back({begin, begin + ph.p_memsz});
  }
  collected.objects.push_back(std::move(mapped));
  return 0;
}

struct RangeQuery {
  uint64_t address;
  TextRange range;
};

int find_range(dl_phdr_info* info, size_t, void* data) {
  auto& query = *static_cast<RangeQuery*>(data);
  TextRange range{UINT64_MAX, 0};
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uint64_t begin = info->dlpi_addr + ph.p_vaddr;
    const uint64_t end = begin + ph.p_memsz;
    if (query.address >= begin && query.address < end) contains = true;
    if ((ph.p_flags & PF_X) == 0) continue;
    range.begin = std::min(range.begin, begin);
    range.end = std::max(range.end, end);
  }
  if (!contains) return 0;
  query.range = range;
  return 1;
}

}  // namespace

std::vector<MappedObject> mapped_objects() {
  Collected collected;
  dl_iterate_phdr(collect, &collected);
  return std::move(collected.objects);
}

std::vector<protocol::LoadedObject> loaded_objects() {
  std::vector<protocol::LoadedObject> objects;
  for (MappedObject& mapped : mapped_objects()) objects.push_back(std::move(mapped.object));
  return objects;
}

TextRange text_range_of(const void* address) {
  RangeQuery query{reinterpret_cast<uint64_t>(address), {}};
  dl_iterate_phdr(find_range, &query);
  return query.range;
}

}  // namespace dprobe::agent
