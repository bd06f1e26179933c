// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/process/process_objects.h"

#include <sys/stat.h>

namespace dprobe::cli {
namespace {

bool same(const protocol::LoadedObject& a, const protocol::LoadedObject& b) {
  return a.dev == b.dev && a.ino == b.ino && a.bias == b.bias;
}

}  // namespace

ProcessObjects::ProcessObjects(const std::vector<protocol::LoadedObject>& loaded,
                               TargetResolver& resolver)
    : resolver_(resolver) {
  for (const protocol::LoadedObject& object : loaded) add(object);
}

void ProcessObjects::add(const protocol::LoadedObject& object) {
  std::lock_guard lock(mutex_);
  for (Entry& entry : entries_) {
    if (same(*entry.loaded, object)) {
      entry.mapped = true;
      return;
    }
  }
  auto file = resolver_.load(object.path);
  if (!file) return;
  entries_.push_back({std::make_unique<protocol::LoadedObject>(object), *file, true});
}

void ProcessObjects::remove(const protocol::LoadedObject& object) {
  std::lock_guard lock(mutex_);
  for (Entry& entry : entries_) {
    if (same(*entry.loaded, object)) entry.mapped = false;
  }
}

std::optional<PlacedObject> ProcessObjects::find(const LoadedObject& file) const {
  struct stat st {};
  if (::stat(file.elf.path().c_str(), &st) != 0) return std::nullopt;
  std::lock_guard lock(mutex_);
  for (const Entry& entry : entries_) {
    if (entry.mapped && entry.loaded->dev == st.st_dev && entry.loaded->ino == st.st_ino) {
      return PlacedObject{entry.loaded.get(), entry.file};
    }
  }
  return std::nullopt;
}

std::optional<PlacedObject> ProcessObjects::containing(uint64_t address) const {
  std::lock_guard lock(mutex_);
  for (const Entry& entry : entries_) {
    const uint64_t vaddr = address - entry.loaded->bias;
    if (entry.mapped && entry.file->elf.is_executable_vaddr(vaddr)) {
      return PlacedObject{entry.loaded.get(), entry.file};
    }
  }
  return std::nullopt;
}

}  // namespace dprobe::cli

namespace dprobe::cli {

std::optional<PlacedObject> ProcessObjects::containing_then_or_now(uint64_t address) const {
  if (auto now = containing(address)) return now;
  std::lock_guard lock(mutex_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {  // the latest first
    if (it->file->elf.is_executable_vaddr(address - it->loaded->bias)) {
      return PlacedObject{it->loaded.get(), it->file};
    }
  }
  return std::nullopt;
}

}  // namespace dprobe::cli
