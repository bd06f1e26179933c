// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "core/hit/unwind_memory.h"

#include "arch/runtime/safe_memory.h"
#include "base/hit_path.h"

namespace dprobe::core {
namespace {

DPROBE_HIT_PATH bool read_safely(void*, void* dst, uint64_t src, size_t size) noexcept {
  return arch::safe_read(dst, src, size);
}

}  // namespace

DPROBE_HIT_PATH UnwindMemory safe_unwind_memory() noexcept { return {read_safely, nullptr}; }

}  // namespace dprobe::core
