// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/hit/stack_trace.h"

#include <atomic>

#include "agent/loaded_objects.h"
#include "base/hit_path.h"
#include "core/probe_point.h"

namespace dprobe::agent {
namespace {

// Static storage, set up before any code runs (no constructor to order),
// never freed: a hit on any thread may be reading them.
constinit core::UnwindObjects g_objects;
constinit core::UnwindCache g_cache;

struct ReturnStubTable {
  const arch::ReturnStubs* stubs;
  core::ReturnInstancePool* pool;
};
std::atomic<const ReturnStubTable*> g_return_stubs{nullptr};

// The agent's own text: its frames (an interposer between the program and
// the C library: syscall(), sigaction()) are dprobe's work, not the
// program's, and a stack leaves them out.
constinit std::atomic<uint64_t> g_own_begin{0};
constinit std::atomic<uint64_t> g_own_end{0};

// pcs[1..n) without the agent's frames, in place; the new count.
DPROBE_HIT_PATH uint32_t without_own_frames(uint64_t* pcs, uint32_t n) noexcept {
  const uint64_t begin = g_own_begin.load(std::memory_order_relaxed);
  const uint64_t end = g_own_end.load(std::memory_order_relaxed);
  uint32_t kept = n > 0 ? 1 : 0;  // the probed address stays, whatever it is
  for (uint32_t i = 1; i < n; ++i) {
    if (pcs[i] >= begin && pcs[i] < end) continue;
    pcs[kept++] = pcs[i];
  }
  return kept;
}

// A tail call out of a return-probed function into another returns
// through both stubs: the inner instance's return address is the outer
// stub. Chains are never longer than the live instances of one thread.
constexpr uint32_t kMaxStubChain = core::kMaxActiveLimit;

// The return address a stub stands for, from the stub's instance, read
// without a lock. The instance is found by the stub's index rather than in
// the thread's list: one dropped as a zombie (a coroutine's frame) is still
// on the stack and still right. It must be for this very slot: a stub
// address left in a dead frame, or an instance reused since, ends the
// stack instead of showing a wrong caller.
class StubFixup final : public core::ReturnAddressFixup {
 public:
  explicit StubFixup(const ReturnStubTable* table) : table_(table) {}

  uint64_t real_return_address(uint64_t address, uint64_t slot) const noexcept override {
    if (table_ == nullptr) return address;
    for (uint32_t hop = 0; hop < kMaxStubChain; ++hop) {
      if (!table_->stubs->contains(address)) return address;
      const auto index = table_->stubs->index_of(address);
      if (!index || *index >= table_->pool->size()) return 0;
      const core::ReturnInstance& instance = table_->pool->at(*index);
      const uint32_t state = instance.state.load(std::memory_order_acquire);
      if (state == core::kInstanceFree || state == core::kInstanceSpare ||
          (slot != 0 && instance.stack_slot != slot))
        return 0;
      address = instance.return_address;
    }
    return 0;
  }

 private:
  const ReturnStubTable* table_;
};

DPROBE_HIT_PATH bool read_through(void* context, void* dst, uint64_t src, size_t size) noexcept {
  const auto& reader = *static_cast<const trace::MemoryReader*>(context);
  return reader.read(reader.context, dst, src, size);
}

}  // namespace

const core::UnwindObjects& unwind_objects() noexcept { return g_objects; }

void refresh_unwind_objects() {
  g_objects.assign(core::loaded_unwind_objects());
  if (g_own_end.load() == 0) {
    const TextRange own = text_range_of(reinterpret_cast<const void*>(&refresh_unwind_objects));
    g_own_begin.store(own.begin);
    g_own_end.store(own.end);
  }
}

void set_return_stubs(const arch::ReturnStubs* stubs, core::ReturnInstancePool* pool) noexcept {
  if (stubs == nullptr || pool == nullptr || g_return_stubs.load() != nullptr) return;
  // Never freed, as the stubs themselves.
  g_return_stubs.store(new ReturnStubTable{stubs, pool}, std::memory_order_release);
}

DPROBE_HIT_PATH uint32_t capture_user_stack(const arch::SavedRegs& regs,
                                            const trace::MemoryReader& memory, uint64_t* pcs,
                                            uint32_t max) noexcept {
  const StubFixup fixup(g_return_stubs.load(std::memory_order_acquire));
  trace::MemoryReader reader = memory;
  return without_own_frames(pcs, core::unwind_stack(regs, g_objects, pcs, max, &fixup,
                                                    {read_through, &reader}, &g_cache));
}

DPROBE_HIT_PATH uint32_t capture_user_stack(const arch::SavedRegs& regs, uint64_t* pcs,
                                            uint32_t max) noexcept {
  const StubFixup fixup(g_return_stubs.load(std::memory_order_acquire));
  return without_own_frames(pcs, core::unwind_stack(regs, g_objects, pcs, max, &fixup,
                                                    core::safe_unwind_memory(), &g_cache));
}

}  // namespace dprobe::agent
