// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Writes code of this very process through /proc/self/mem: the kernel
// breaks copy-on-write for us and no page is ever made writable, so a
// stray write of the program can never land in its own text. The
// descriptor is the agent's (arch/runtime/agent_descriptors.h): high, out
// of the program's way, and opened again before a use if the program
// closed it or put a file of its own on its number.
//
//   auto patcher = TextPatcher::open();
//   patcher->write(address, breakpoint_insn());
#ifndef DPROBE_CORE_TEXT_PATCHER_H_
#define DPROBE_CORE_TEXT_PATCHER_H_

#include <cstdint>
#include <memory>
#include <span>

#include "arch/runtime/agent_descriptors.h"
#include "base/result.h"

namespace dprobe::core {

class TextPatcher {
 public:
  static Result<TextPatcher> open();
  TextPatcher(TextPatcher&& other) noexcept = default;
  TextPatcher& operator=(TextPatcher&&) = delete;
  ~TextPatcher();

  // After fork, in the child: the inherited descriptor still reaches the
  // parent's memory (/proc/PID/mem holds the address space it was opened
  // on), so the child opens its own before writing anything.
  Result<void> reopen();

  Result<void> write(uint64_t address, std::span<const uint8_t> bytes) const;
  Result<void> read(uint64_t address, std::span<uint8_t> bytes) const;

 private:
  explicit TextPatcher(std::unique_ptr<arch::AgentDescriptor> mem) : mem_(std::move(mem)) {}
  // The descriptor, checked (and opened again if it is not ours any more).
  Result<int> usable() const;

  // By pointer: the interposers find it by address.
  std::unique_ptr<arch::AgentDescriptor> mem_;
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_TEXT_PATCHER_H_
