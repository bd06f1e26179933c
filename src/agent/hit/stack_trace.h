// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// User stack traces at a hit (--stacktrace, the hist key `stacktrace`): the
// program's call chain, unwound through the loaded objects' .eh_frame by
// core::unwind_stack, with the return probes' stubs replaced by the return
// addresses they stand for. The agent keeps the table of objects in step
// with the dynamic loader, and one cache of frame rules for all threads.
//
//   refresh_unwind_objects();              // at start-up, after each load/unload
//   set_return_stubs(&stubs, &pool);       // once the return stubs exist
//   ... on a hit:
//   uint64_t pcs[core::kMaxStackDepth];
//   uint32_t n = capture_user_stack(regs, memory_reader_for(probe), pcs, core::kMaxStackDepth);
#ifndef DPROBE_AGENT_STACK_TRACE_H_
#define DPROBE_AGENT_STACK_TRACE_H_

#include <cstdint>

#include "arch/probe_insn.h"
#include "arch/runtime/return_stubs.h"
#include "core/hit/return_instances.h"
#include "core/hit/stack_unwind.h"
#include "core/hit/unwind_objects.h"
#include "trace/hit/fetch_exec.h"

namespace dprobe::agent {

// The objects the unwinder searches.
const core::UnwindObjects& unwind_objects() noexcept;

// Makes the table hold the objects mapped now, the vDSO included. Not on a
// hit: it allocates and takes the loader's lock (dl_iterate_phdr); the
// loader watch calls it, from the thread that is loading.
void refresh_unwind_objects();

// The return probes' stubs and instances, which live until the end: from
// now on a stub found as a return address is replaced by the real one.
void set_return_stubs(const arch::ReturnStubs* stubs, core::ReturnInstancePool* pool) noexcept;

// The call chain at a hit into pcs[0..max): pcs[0] is regs' ip (the probed
// address), then the callers' return addresses; returns how many. No
// allocation, lock or libc call; memory is read through `memory` (the
// probe's reader: a probe that may run with every signal blocked must not
// fault, see memory_reader_for).
uint32_t capture_user_stack(const arch::SavedRegs& regs, const trace::MemoryReader& memory,
                            uint64_t* pcs, uint32_t max) noexcept;
// The same with the fault-safe copies (arch::safe_read).
uint32_t capture_user_stack(const arch::SavedRegs& regs, uint64_t* pcs, uint32_t max) noexcept;

}  // namespace dprobe::agent

#endif  // DPROBE_AGENT_STACK_TRACE_H_
