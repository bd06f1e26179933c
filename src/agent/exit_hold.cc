// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/exit_hold.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/syscall.h>

#include <vector>

#include "agent/agent_state.h"
#include "agent/controller.h"
#include "agent/hit/syscall_hit.h"
#include "agent/hit/thread_trace.h"
#include "agent/interpose.h"
#include "arch/probe_insn.h"
#include "arch/runtime/raw_syscall.h"
#include "core/text_patcher.h"

namespace dprobe::agent {
namespace {

uint64_t g_exit_function = 0;  // the C library's _exit, sent here

// The program's exit_group, made here from the agent's text: recorded as
// the C library's call at `call_site` would have been (not counted: it
// never returns, and strace -c counts a call when it returns).
void record_program_exit_group(int status, uint64_t call_site) noexcept {
  const uint64_t args[] = {static_cast<uint64_t>(status)};
  dispatch::record_answered_call(SYS_exit_group, args, 0, call_site, /*returns=*/false);
}

// Every caller's _exit: exit() at its very end, the program's own _exit
// and _Exit, a child of fork or vfork (on its parent's memory and stack:
// nothing here allocates or locks unless this is the process that waits).
[[noreturn]] void held_exit(int status) {
  record_program_exit_group(status, g_exit_function);
  const uint32_t holder = agent_state().exit_waits_pid.load(std::memory_order_acquire);
  // Not in a seccomp sandbox, which may allow no other call than the exit
  // (getpid, the channel's): asked first.
  if (holder != 0 && !sandboxed() && holder == static_cast<uint32_t>(arch::raw_getpid())) {
    const AgentWork work;
    Controller::instance().wait_for_trace_at_exit();
  }
  for (;;) arch::raw_syscall(SYS_exit_group, status);
}

// The retired rings of threads that exited counted before the CLI reads
// the final profile (at exit(), while the program's threads still run).
__attribute__((destructor)) void at_exit() { retire_threads_at_exit(); }

}  // namespace

bool install_exit_hold(core::ProbeRegistry& registry) {
  if (g_exit_function != 0) return true;  // this image's, from an earlier session
  using ExitFn = void (*)(int);
  auto* exit_function = reinterpret_cast<void*>(next_function<ExitFn>("_exit"));
  Dl_info info{};
  void* entry = nullptr;  // the function's ElfW(Sym), for its size
  if (exit_function == nullptr || ::dladdr1(exit_function, &info, &entry, RTLD_DL_SYMENT) == 0 ||
      entry == nullptr) {
    return false;
  }
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  const auto begin = reinterpret_cast<uint64_t>(exit_function);
  const std::vector<uint8_t> jump = arch::detour_jump(reinterpret_cast<uint64_t>(&held_exit));
  if (symbol->st_size < jump.size()) return false;
  auto patcher = core::TextPatcher::open();
  if (!patcher) return false;
  g_exit_function = begin;  // before the jump: a vfork child may take it at once
  if (!patcher->write(begin, jump)) {
    g_exit_function = 0;
    return false;
  }
  registry.reserve(begin, begin + symbol->st_size,
                   "dprobe run holds the program's exit there until the trace is written "
                   "(its exit_group is the syscalls:sys_enter_exit_group event)");
  return true;
}

}  // namespace dprobe::agent
