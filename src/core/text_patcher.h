// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Writes code of this very process through /proc/self/mem: the kernel
// breaks copy-on-write for us and no page is ever made writable, so a
// stray write of the program can never land in its own text.
//
//   auto patcher = TextPatcher::open();
//   patcher->write(address, breakpoint_insn());
#ifndef DPROBE_CORE_TEXT_PATCHER_H_
#define DPROBE_CORE_TEXT_PATCHER_H_

#include <cstdint>
#include <span>

#include "base/result.h"

namespace dprobe::core {

class TextPatcher {
 public:
  static Result<TextPatcher> open();
  TextPatcher(TextPatcher&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  TextPatcher& operator=(TextPatcher&&) = delete;
  ~TextPatcher();

  // After fork, in the child: the inherited descriptor still reaches the
  // parent's memory (/proc/PID/mem holds the address space it was opened
  // on), so the child opens its own before writing anything.
  Result<void> reopen();

  Result<void> write(uint64_t address, std::span<const uint8_t> bytes) const;
  Result<void> read(uint64_t address, std::span<uint8_t> bytes) const;

 private:
  explicit TextPatcher(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace dprobe::core

#endif  // DPROBE_CORE_TEXT_PATCHER_H_
