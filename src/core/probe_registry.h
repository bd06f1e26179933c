// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// The probe engine's registry, in the manner of kernel/kprobes.c: probes
// are added (prepared: decoded, checked, given a slot), armed together,
// found by address on every trap, and disarmed, restoring every byte.
//
//   auto registry = ProbeRegistry::create();
//   registry->blacklist(begin, end, "the agent itself");
//   registry->add({address, function, size}, /*handler=*/0);
//   registry->arm_all();
//   const Probe* probe = registry->find(trap_address);   // in the trap handler
//   registry->disarm_all();
#ifndef DPROBE_CORE_PROBE_REGISTRY_H_
#define DPROBE_CORE_PROBE_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/probe.h"
#include "core/probe_table.h"
#include "core/slot_allocator.h"
#include "core/text_patcher.h"

namespace dprobe::core {

struct ProbeSite {
  uint64_t address = 0;
  uint64_t function_address = 0;  // equal to address when the function is unknown
  uint64_t function_size = 0;
};

enum class AddStatus : uint8_t { kOk, kNotBoundary, kRejected, kBlacklisted, kNoSlot, kNotMapped };

struct AddFailure {
  AddStatus status;
  std::string message;
};

class ProbeRegistry {
 public:
  static Result<ProbeRegistry> create();
  ProbeRegistry(ProbeRegistry&&) noexcept = default;
  ProbeRegistry& operator=(ProbeRegistry&&) = delete;

  // Addresses no probe may take, with the reason given when one tries.
  void blacklist(uint64_t begin, uint64_t end, std::string reason);

  // Adds `handler` at the site; the first handler at an address prepares
  // the probe there. Not allowed once armed.
  Result<void, AddFailure> add(const ProbeSite& site, uint32_t handler);

  // Arms every probe, or none: a failure disarms what was armed.
  Result<void> arm_all();
  void disarm_all() noexcept;

  const Probe* find(uint64_t address) const noexcept { return table_.find(address); }
  // The probe whose out-of-line slot holds `pc`; for faults there, which
  // the program must see at the probed address. A scan: faults are rare.
  const Probe* find_by_slot(uint64_t pc) const noexcept;
  size_t size() const { return probes_.size(); }

 private:
  explicit ProbeRegistry(TextPatcher patcher) : patcher_(std::move(patcher)) {}
  Result<std::unique_ptr<Probe>, AddFailure> prepare(const ProbeSite& site);
  const std::string* blacklisted(uint64_t address) const;

  struct Range {
    uint64_t begin;
    uint64_t end;
    std::string reason;
  };

  TextPatcher patcher_;
  std::unique_ptr<SlotAllocator> slots_ = std::make_unique<SlotAllocator>();
  std::vector<std::unique_ptr<Probe>> probes_;
  std::vector<Range> blacklist_;
  ProbeTable table_;
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_PROBE_REGISTRY_H_
