// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/probe_registry.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "arch/runtime/safe_memory.h"

namespace dprobe::core {
namespace {

// Enough bytes past the probe for the longest instruction.
constexpr uint64_t kInsnReach = 16;
// Decoding from a function's start is linear; past this it is not worth it.
constexpr uint64_t kMaxDecodeSpan = 1u << 20;

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%" PRIx64, value);
  return text;
}

Unexpected<AddFailure> failure(AddStatus status, std::string message) {
  return unexpected(AddFailure{status, std::move(message)});
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

}  // namespace

Result<ProbeRegistry> ProbeRegistry::create() {
  auto patcher = TextPatcher::open();
  if (!patcher) return unexpected(patcher.error());
  return ProbeRegistry(std::move(*patcher));
}

void ProbeRegistry::blacklist(uint64_t begin, uint64_t end, std::string reason) {
  blacklist_.push_back({begin, end, std::move(reason)});
}

const std::string* ProbeRegistry::blacklisted(uint64_t address) const {
  for (const Range& range : blacklist_) {
    if (address >= range.begin && address < range.end) return &range.reason;
  }
  return nullptr;
}

Result<void, AddFailure> ProbeRegistry::add(const ProbeSite& site, uint32_t handler) {
  // The trap handler reads the table unlocked: it changes only before arming.
  if (table_.size() > 0) return failure(AddStatus::kNotMapped, "probes are already armed");
  for (const auto& probe : probes_) {
    if (probe->address == site.address) {
      probe->handlers.push_back(handler);
      return {};
    }
  }
  auto probe = prepare(site);
  if (!probe) return unexpected(probe.error());
  (*probe)->handlers.push_back(handler);
  probes_.push_back(std::move(*probe));
  return {};
}

Result<std::unique_ptr<Probe>, AddFailure> ProbeRegistry::prepare(const ProbeSite& site) {
  if (const std::string* reason = blacklisted(site.address)) {
    return failure(AddStatus::kBlacklisted, *reason);
  }
  const bool from_function = site.function_address <= site.address &&
                             site.address - site.function_address < kMaxDecodeSpan;
  const uint64_t begin = from_function ? site.function_address : site.address;
  const std::vector<uint8_t> code = read_code(begin, site.address + kInsnReach);
  if (code.size() <= site.address - begin) {
    return failure(AddStatus::kNotMapped, hex(site.address) + " is not readable code");
  }
  auto insn = arch::prepare_insn(code, begin, site.address);
  if (!insn) {
    const bool boundary = insn.error().status == arch::PrepareStatus::kNotBoundary;
    return failure(boundary ? AddStatus::kNotBoundary : AddStatus::kRejected, insn.error().message);
  }
  auto probe = std::make_unique<Probe>();
  probe->address = site.address;
  probe->insn = *insn;
  auto slot = slots_->allocate(site.address);
  if (!slot) return failure(AddStatus::kNoSlot, slot.error().message);
  uint8_t bytes[arch::kSlotBytes];
  auto written = arch::write_slot(*insn, *slot, bytes);
  if (!written) return failure(AddStatus::kNoSlot, written.error());
  if (auto copied = patcher_.write(*slot, {bytes, *written}); !copied) {
    return failure(AddStatus::kNoSlot, copied.error().message);
  }
  probe->slot = *slot;
  const auto breakpoint = arch::breakpoint_insn();
  probe->original.assign(insn->insn.bytes.begin(), insn->insn.bytes.begin() + breakpoint.size());
  return probe;
}

Result<void> ProbeRegistry::arm_all() {
  std::vector<Probe*> all;
  for (auto& probe : probes_) all.push_back(probe.get());
  // The table first: a thread may hit a breakpoint the moment it is written.
  table_ = ProbeTable(all);
  for (Probe* probe : all) {
    if (probe->armed) continue;
    if (auto written = patcher_.write(probe->address, arch::breakpoint_insn()); !written) {
      disarm_all();
      return written;
    }
    probe->armed = true;
  }
  return {};
}

const Probe* ProbeRegistry::find_by_slot(uint64_t pc) const noexcept {
  if (table_.size() == 0) return nullptr;  // the probe list is stable once armed
  for (const auto& probe : probes_) {
    if (pc >= probe->slot && pc < probe->slot + arch::kSlotBytes) return probe.get();
  }
  return nullptr;
}

void ProbeRegistry::disarm_all() noexcept {
  for (auto& probe : probes_) {
    if (!probe->armed) continue;
    if (patcher_.write(probe->address, probe->original)) probe->armed = false;
  }
  // The table stays: a thread that trapped just before the byte came back
  // still finds its probe and resumes through the slot.
}

}  // namespace dprobe::core
