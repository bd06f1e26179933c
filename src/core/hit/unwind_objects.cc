// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/unwind_objects.h"

#include <link.h>

#include <algorithm>
#include <vector>

#include "arch/runtime/platform.h"
#include "base/hit_path.h"

namespace dprobe::core {
namespace {

int collect_object(dl_phdr_info* info, size_t, void* data) {
  auto& objects = *static_cast<std::vector<UnwindObject>*>(data);
  uint64_t begin = UINT64_MAX;
  uint64_t end = 0;
  uint64_t hdr = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uint64_t at = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_GNU_EH_FRAME) hdr = at;
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    begin = std::min(begin, at);
    end = std::max(end, at + ph.p_memsz);
  }
  if (begin >= end || objects.size() == UnwindObjects::kCapacity) return 0;
  if (auto object = describe_object(begin, end, hdr, safe_unwind_memory())) {
    objects.push_back(*object);
  }
  return 0;
}

}  // namespace

std::vector<UnwindObject> loaded_unwind_objects() {
  std::vector<UnwindObject> objects;
  ::dl_iterate_phdr(collect_object, &objects);
  return objects;
}

DPROBE_HIT_PATH UnwindObject UnwindObjects::load(uint32_t index) const noexcept {
  const Entry& e = entries_[index];
  constexpr auto kRelaxed = std::memory_order_relaxed;
  return {e.text_begin.load(kRelaxed), e.text_end.load(kRelaxed), e.eh_frame_hdr.load(kRelaxed),
          e.table.load(kRelaxed), e.fde_count.load(kRelaxed)};
}

void UnwindObjects::store(uint32_t index, const UnwindObject& object) noexcept {
  Entry& e = entries_[index];
  constexpr auto kRelaxed = std::memory_order_relaxed;
  e.text_begin.store(object.text_begin, kRelaxed);
  e.text_end.store(object.text_end, kRelaxed);
  e.eh_frame_hdr.store(object.eh_frame_hdr, kRelaxed);
  e.table.store(object.table, kRelaxed);
  e.fde_count.store(object.fde_count, kRelaxed);
}

void UnwindObjects::begin_write() noexcept {
  sequence_.store(sequence_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // The odd count is seen before any entry changes.
  std::atomic_thread_fence(std::memory_order_release);
}

void UnwindObjects::end_write() noexcept {
  sequence_.store(sequence_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

bool UnwindObjects::insert_locked(const UnwindObject& object) noexcept {
  const uint32_t count = size();
  if (count == kCapacity || object.text_begin >= object.text_end) return false;
  uint32_t at = 0;
  while (at < count && load(at).text_begin < object.text_begin) ++at;
  if (at > 0 && load(at - 1).text_end > object.text_begin) return false;
  if (at < count && load(at).text_begin < object.text_end) return false;
  begin_write();
  for (uint32_t i = count; i > at; --i) store(i, load(i - 1));
  store(at, object);
  count_.store(count + 1, std::memory_order_relaxed);
  end_write();
  return true;
}

bool UnwindObjects::erase_locked(uint64_t text_begin) noexcept {
  const uint32_t count = size();
  uint32_t at = 0;
  while (at < count && load(at).text_begin != text_begin) ++at;
  if (at == count) return false;
  begin_write();
  for (uint32_t i = at; i + 1 < count; ++i) store(i, load(i + 1));
  store(count - 1, UnwindObject{});
  count_.store(count - 1, std::memory_order_relaxed);
  end_write();
  return true;
}

bool UnwindObjects::add(const UnwindObject& object) {
  std::lock_guard lock(writer_);
  return insert_locked(object);
}

bool UnwindObjects::remove(uint64_t text_begin) {
  std::lock_guard lock(writer_);
  return erase_locked(text_begin);
}

void UnwindObjects::assign(std::span<const UnwindObject> objects) {
  std::vector<UnwindObject> wanted(objects.begin(), objects.end());
  auto before = [](const UnwindObject& a, const UnwindObject& b) {
    return a.text_begin < b.text_begin;
  };
  std::sort(wanted.begin(), wanted.end(), before);
  auto is_wanted = [&](const UnwindObject& object) {
    auto it = std::lower_bound(wanted.begin(), wanted.end(), object, before);
    return it != wanted.end() && *it == object;
  };
  std::lock_guard lock(writer_);
  // Each change is a write of its own: readers meanwhile see a table that
  // is whole, only not finished.
  for (uint32_t i = 0; i < size();) {
    const UnwindObject object = load(i);
    if (is_wanted(object)) {
      ++i;
    } else {
      erase_locked(object.text_begin);
    }
  }
  for (const UnwindObject& object : wanted) {
    UnwindObject present;
    if (!search(object.text_begin, size(), present) || !(present == object)) insert_locked(object);
  }
}

DPROBE_HIT_PATH bool UnwindObjects::search(uint64_t pc, uint32_t count,
                                           UnwindObject& out) const noexcept {
  // The last entry that begins at or below pc.
  uint32_t lo = 0;
  uint32_t hi = std::min(count, kCapacity);
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (entries_[mid].text_begin.load(std::memory_order_relaxed) <= pc) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return false;
  out = load(lo - 1);
  return pc >= out.text_begin && pc < out.text_end;
}

DPROBE_HIT_PATH bool UnwindObjects::find(uint64_t pc, UnwindObject& out) const noexcept {
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    const uint64_t before = sequence_.load(std::memory_order_acquire);
    if ((before & 1) != 0) {
      for (int i = 0; i < 64; ++i) arch::cpu_relax();
      continue;
    }
    const bool found = search(pc, count_.load(std::memory_order_relaxed), out);
    // The entries were read before the sequence is read again.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sequence_.load(std::memory_order_relaxed) == before) return found;
  }
  return false;
}

}  // namespace dprobe::core
