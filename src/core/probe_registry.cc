// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/probe_registry.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "arch/runtime/safe_memory.h"

namespace dprobe::core {
namespace {

// Enough bytes past the probe for the longest instruction.
constexpr uint64_t kInsnReach = arch::kMaxInsnBytes + 1;
// Decoding from a function's start is linear; past this it is not worth it.
constexpr uint64_t kMaxDecodeSpan = 1u << 20;

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%" PRIx64, value);
  return text;
}

Unexpected<arch::Refusal> failure(arch::ArmStatus status, std::string message) {
  return unexpected(arch::Refusal{status, std::move(message)});
}

// The code from where decoding starts to just past the probe, read from
// this process's own memory. Near the end of a mapping fewer bytes follow.
std::vector<uint8_t> read_code(uint64_t begin, uint64_t end) {
  std::vector<uint8_t> code(end - begin);
  while (!code.empty() && !arch::safe_read(code.data(), begin, code.size())) {
    code.resize(code.size() > kInsnReach ? code.size() - 1 : 0);
  }
  return code;
}

bool in_range(uint64_t address, uint64_t begin, uint64_t end) {
  return address >= begin && address < end;
}

}  // namespace

ProbeRegistry::ProbeRegistry(TextPatcher patcher) : patcher_(std::move(patcher)) {}

ProbeRegistry::ProbeRegistry(ProbeRegistry&& other) noexcept
    : patcher_(std::move(other.patcher_)),
      slots_(std::move(other.slots_)),
      slot_cache_(std::move(other.slot_cache_)),
      probes_(std::move(other.probes_)),
      blacklist_(std::move(other.blacklist_)),
      trampolines_(std::move(other.trampolines_)),
      optimizer_(std::move(other.optimizer_)),
      next_id_(other.next_id_),
      live_(other.live_),
      snapshot_(other.snapshot_.exchange(nullptr)) {}

ProbeRegistry::~ProbeRegistry() { delete snapshot_.load(); }

Result<ProbeRegistry> ProbeRegistry::create() {
  auto patcher = TextPatcher::open();
  if (!patcher) return unexpected(patcher.error());
  return ProbeRegistry(std::move(*patcher));
}

void ProbeRegistry::blacklist(uint64_t begin, uint64_t end, std::string reason, bool as_jump) {
  blacklist_.push_back({begin, end, std::move(reason), as_jump});
}

void ProbeRegistry::reserve(uint64_t begin, uint64_t end, std::string reason) {
  blacklist_.insert(blacklist_.begin(), {begin, end, std::move(reason), false});
}

const ProbeRegistry::Range* ProbeRegistry::blacklisted(uint64_t address) const {
  for (const Range& range : blacklist_) {
    if (in_range(address, range.begin, range.end)) return &range;
  }
  return nullptr;
}

// A new or changed probe goes live: published, and armed once the
// registry is.
Result<void, arch::Refusal> ProbeRegistry::publish_and_arm(Probe& probe) {
  publish();
  if (live_) {
    if (auto armed = arm(probe); !armed)
      return failure(arch::ArmStatus::kNotMapped, armed.error().message);
  }
  return {};
}

Result<void, arch::Refusal> ProbeRegistry::add(const ProbeSite& site, uint32_t handler) {
  auto probe = probe_at(site);
  if (!probe) return unexpected(probe.error());
  // A live probe's handlers change under a new snapshot, not in place.
  (*probe)->handlers.push_back(handler);
  return publish_and_arm(**probe);
}

Result<void, arch::Refusal> ProbeRegistry::add_internal(const ProbeSite& site,
                                                        InternalHandler internal) {
  auto probe = probe_at(site);
  if (!probe) return unexpected(probe.error());
  (*probe)->internal = internal;
  return publish_and_arm(**probe);
}

Result<void, arch::Refusal> ProbeRegistry::add_syscall_site(const ProbeSite& site,
                                                            uint64_t syscall_at) {
  if (probes_.count(site.address) != 0) {
    return failure(arch::ArmStatus::kRejected, "a probe is there already");
  }
  auto probe = probe_at(site);
  if (!probe) return unexpected(probe.error());
  (*probe)->syscall_at = syscall_at;
  return publish_and_arm(**probe);
}

// The probe at the site's address: the one there, or a new one. A probe's
// handler list is only ever appended to before its snapshot is published:
// an existing probe is copied, changed, and replaces the old one.
Result<Probe*, arch::Refusal> ProbeRegistry::probe_at(const ProbeSite& site) {
  auto it = probes_.find(site.address);
  if (it != probes_.end()) {
    return &replace_with_copy(it->second);
  }
  // A breakpoint inside the bytes a jump covers would break the jump; one
  // that may not become a breakpoint keeps its place.
  if (const Probe* owner = jump_only_around(site.address)) {
    return failure(arch::ArmStatus::kBlacklisted, "it is inside the jump of the probe at " +
                                                      hex(owner->address) +
                                                      ", which may not become a breakpoint");
  }
  unoptimize_around(site.address);
  auto probe = prepare(site);
  if (!probe) return unexpected(probe.error());
  Probe* raw = probe->get();
  probes_.emplace(site.address, std::move(*probe));
  return raw;
}

Probe& ProbeRegistry::replace_with_copy(std::unique_ptr<Probe>& held) {
  auto copy = std::make_unique<Probe>(*held);
  epochs_.retire(std::move(held));
  held = std::move(copy);
  return *held;
}

Result<std::unique_ptr<Probe>, arch::Refusal> ProbeRegistry::prepare(const ProbeSite& site) {
  const Range* banned = blacklisted(site.address);
  if (banned != nullptr && !(banned->as_jump && direct_jumps_ && optimizer_)) {
    return failure(
        arch::ArmStatus::kBlacklisted,
        banned->reason + (banned->as_jump ? "; a jump could go there, written while no other "
                                            "thread runs (dprobe run before the program starts, "
                                            "attach to a program of one thread; optimized)"
                                          : ""));
  }
  const bool from_function = site.function_address <= site.address &&
                             site.address - site.function_address < kMaxDecodeSpan;
  const uint64_t begin = from_function ? site.function_address : site.address;
  const std::vector<uint8_t> code = read_code(begin, site.address + kInsnReach);
  if (code.size() <= site.address - begin) {
    return failure(arch::ArmStatus::kNotMapped, hex(site.address) + " is not readable code");
  }
  auto insn = arch::prepare_insn(code, begin, site.address);
  if (!insn) return unexpected(std::move(insn.error()));
  auto slot = slot_for(*insn);
  if (!slot) return unexpected(slot.error());
  auto probe = std::make_unique<Probe>();
  probe->address = site.address;
  probe->id = next_id_++;
  probe->insn = *insn;
  probe->slot = *slot;
  if (from_function) {
    probe->function_address = site.function_address;
    probe->function_size = std::min(site.function_size, kMaxDecodeSpan);
  }
  const auto breakpoint = arch::breakpoint_insn();
  const auto& bytes = arch::insn_bytes(*insn);
  probe->original.assign(bytes.begin(), bytes.begin() + breakpoint.size());
  if (banned != nullptr) {
    probe->jump_only = true;
    if (auto ready = prepare_jump(*probe); !ready) {
      return failure(arch::ArmStatus::kBlacklisted,
                     banned->reason + "; nor can it be a jump: " + ready.error());
    }
  }
  return probe;
}

Result<uint64_t, arch::Refusal> ProbeRegistry::slot_for(const arch::ProbeInsn& insn) {
  const SlotKey key{arch::insn_address(insn), arch::insn_bytes(insn)};
  if (auto cached = slot_cache_.find(key); cached != slot_cache_.end()) return cached->second;
  auto slot = slots_->allocate(arch::insn_address(insn));
  if (!slot) return failure(arch::ArmStatus::kNoSlot, slot.error().message);
  uint8_t bytes[arch::kSlotBytes];
  auto written = arch::write_slot(insn, *slot, bytes);
  if (!written) return failure(arch::ArmStatus::kNoSlot, written.error());
  if (auto copied = patcher_.write(*slot, {bytes, *written}); !copied) {
    return failure(arch::ArmStatus::kNoSlot, copied.error().message);
  }
  slot_cache_.emplace(key, *slot);
  return *slot;
}

// A new snapshot before any breakpoint it covers is written: a thread may
// hit a breakpoint the moment it is there.
void ProbeRegistry::publish() {
  auto snapshot = std::make_unique<ProbeSnapshot>();
  std::vector<Probe*> all;
  for (auto& [address, probe] : probes_) {
    all.push_back(probe.get());
    snapshot->probes.push_back(probe.get());
  }
  snapshot->by_address = ProbeTable(all);
  snapshot->by_id = ProbeTable(all, [](const Probe& probe) -> uint64_t { return probe.id; });
  const ProbeSnapshot* old = snapshot_.exchange(snapshot.release(), std::memory_order_acq_rel);
  epochs_.retire(std::unique_ptr<const ProbeSnapshot>(old));
  epochs_.reclaim();
}

Result<void> ProbeRegistry::arm(Probe& probe) {
  if (probe.armed.load()) return {};
  if (probe.jump_only) return arm_jump(probe);
  if (direct_jumps_ && probe.trampoline != 0 && !probe.optimized.load() && arm_jump(probe)) {
    return {};
  }
  auto written = patcher_.write(probe.address, arch::breakpoint_insn());
  if (written) probe.armed.store(true);
  return written;
}

void ProbeRegistry::disarm(Probe& probe) noexcept {
  if (!probe.armed.load()) return;
  if (probe.jump_only && !direct_jumps_) {
    probe.armed.store(false);  // the way back is a breakpoint: the jump stays
    return;
  }
  unoptimize(probe);
  if (patcher_.write(probe.address, probe.original)) probe.armed.store(false);
}

Result<void> ProbeRegistry::arm_all() {
  if (direct_jumps_ && optimizer_) prepare_direct_jumps();
  publish();
  for (auto& [address, probe] : probes_) {
    if (auto armed = arm(*probe); !armed) {
      disarm_all();
      return armed;
    }
  }
  live_ = true;
  return {};
}

void ProbeRegistry::disarm_all(bool others_stopped) noexcept {
  bool restored = false;
  for (auto& [address, probe] : probes_) {
    if (others_stopped) {
      restored = restore_at_once(*probe) || restored;
    } else {
      disarm(*probe);
    }
  }
  if (restored && optimizer_) optimizer_->sync_cores();
  live_ = false;
  // The snapshot stays: a thread that trapped just before the byte came
  // back still finds its probe and resumes through the slot.
}

void ProbeRegistry::disarm_range(uint64_t begin, uint64_t end) noexcept {
  for (auto& [address, probe] : probes_) {
    if (in_range(address, begin, end)) disarm(*probe);
  }
}

void ProbeRegistry::arm_range(uint64_t begin, uint64_t end) noexcept {
  if (!live_) return;
  for (auto& [address, probe] : probes_) {
    if (in_range(address, begin, end)) (void)arm(*probe);
  }
}

void ProbeRegistry::remove_range(uint64_t begin, uint64_t end) {
  bool removed = false;
  for (auto it = probes_.begin(); it != probes_.end();) {
    if (in_range(it->first, begin, end) && it->second->jump_only && it->second->optimized.load()) {
      // A jump left in the code (see disarm) stays known, its handlers gone.
      replace_with_copy(it->second).handlers.clear();
      removed = true;
      ++it;
    } else if (in_range(it->first, begin, end)) {
      epochs_.retire(std::move(it->second));
      it = probes_.erase(it);
      removed = true;
    } else {
      ++it;
    }
  }
  if (removed) publish();
}

const Probe* ProbeRegistry::Reader::find_syscall_site_by_trampoline(uint64_t pc) const noexcept {
  if (snapshot_ == nullptr) return nullptr;
  for (const Probe* probe : snapshot_->probes) {
    if (probe->syscall_at != 0 && probe->trampoline != 0 && pc >= probe->trampoline &&
        pc < probe->trampoline + arch::kSyscallTrampolineBytes) {
      return probe;
    }
  }
  return nullptr;
}

const Probe* ProbeRegistry::Reader::find_by_slot(uint64_t pc) const noexcept {
  if (snapshot_ == nullptr) return nullptr;
  for (const Probe* probe : snapshot_->probes) {
    if (pc >= probe->slot && pc < probe->slot + arch::kSlotBytes) return probe;
  }
  return nullptr;
}

}  // namespace dprobe::core
