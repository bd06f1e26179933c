// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
#include "agent/jump_optimizer.h"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <time.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/agent_state.h"
#include "arch/runtime/raw_syscall.h"
#include "core/landing_pads.h"

extern "C" void dprobe_optimized_hit(dprobe::arch::SavedRegs* regs, uint64_t address) noexcept;

namespace dprobe::agent {
namespace {

bool g_wanted = false;
bool g_registered = false;
const char* g_unavailable = nullptr;  // why nothing can be optimized

// Registration is per address space: a forked child (a followed one arms
// again) registers on its first use.
void sync_cores() {
  const long done =
      arch::raw_syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0);
  if (done != -EPERM) return;
  arch::raw_syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0);
  arch::raw_syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0);
}

Result<std::vector<uint64_t>, std::string> landing_pads_of(uint64_t begin, uint64_t end) {
  const auto tables = core::unwind_tables_for(begin);
  if (!tables) return std::vector<uint64_t>{};  // no unwind tables: nothing lands anywhere
  return core::landing_pads(*tables, begin, end);
}

// The whole of a small file of /proc, read with raw system calls (every
// function of libc may carry a probe); empty when it cannot be read.
std::string read_proc(const char* path) {
  const long fd =
      arch::raw_syscall(SYS_openat, AT_FDCWD, arch::raw_arg(path), O_RDONLY | O_CLOEXEC);
  if (arch::raw_failed(fd)) return {};
  char buffer[512];
  const long n = arch::raw_syscall(SYS_read, fd, arch::raw_arg(buffer), sizeof(buffer) - 1);
  arch::raw_syscall(SYS_close, fd);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

// The user pc of a thread stopped in the kernel, from the last field of
// /proc/self/task/TID/syscall ("nr args... sp pc", or "-1 sp pc" when not
// in a system call); "running" when it is not stopped at all.
enum class PcRead { kStopped, kRunning, kGone };
PcRead thread_pc(const std::string& tid, uint64_t& pc) {
  const std::string text = read_proc(("/proc/self/task/" + tid + "/syscall").c_str());
  if (text.empty()) return PcRead::kGone;
  if (text.rfind("running", 0) == 0) return PcRead::kRunning;
  const size_t last = text.find_last_of(' ');
  if (last == std::string::npos) return PcRead::kRunning;
  pc = std::strtoull(text.c_str() + last + 1, nullptr, 16);
  return PcRead::kStopped;
}

// The ids of the process's threads but the caller's.
std::vector<std::string> other_threads() {
  std::vector<std::string> tids;
  const long fd = arch::raw_syscall(SYS_openat, AT_FDCWD, arch::raw_arg("/proc/self/task"),
                                    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (arch::raw_failed(fd)) return tids;
  const std::string self = std::to_string(arch::raw_gettid());
  alignas(8) char buffer[4096];
  while (true) {
    const long n = arch::raw_syscall(SYS_getdents64, fd, arch::raw_arg(buffer), sizeof(buffer));
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      struct Dirent {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* entry = reinterpret_cast<const Dirent*>(buffer + at);
      const std::string name(entry->name);
      if (name[0] >= '0' && name[0] <= '9' && name != self) tids.push_back(name);
      at += entry->reclen;
    }
  }
  arch::raw_syscall(SYS_close, fd);
  return tids;
}

// Where every other thread is stopped. A thread that runs cannot be known;
// asked again a few times (threads mostly wait), then given up.
Result<std::vector<uint64_t>, std::string> other_thread_pcs() {
  constexpr int kTries = 20;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    std::vector<uint64_t> pcs;
    bool running = false;
    for (const std::string& tid : other_threads()) {
      uint64_t pc = 0;
      const PcRead read = thread_pc(tid, pc);
      if (read == PcRead::kRunning) running = true;
      if (read == PcRead::kStopped) pcs.push_back(pc);
    }
    if (!running) return pcs;
    const timespec pause{0, 1'000'000};
    arch::raw_syscall(SYS_nanosleep, arch::raw_arg(&pause), 0);
  }
  return unexpected(
      std::string("another thread kept running: it could have been inside the displaced bytes"));
}

}  // namespace

void set_optimization(bool wanted) {
  g_wanted = wanted;
  if (!wanted || g_registered || g_unavailable != nullptr) return;
  if (arch::raw_failed(arch::raw_syscall(SYS_membarrier,
                                         MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0))) {
    g_unavailable = "the kernel cannot serialize the cores (membarrier SYNC_CORE)";
    return;
  }
  g_registered = true;
  core::OptimizeEnv env;
  env.handler = reinterpret_cast<uint64_t>(&dprobe_optimized_hit);
  env.landing_pads = landing_pads_of;
  env.other_thread_pcs = other_thread_pcs;
  env.sync_cores = sync_cores;
  AgentState& state = agent_state();
  std::lock_guard lock(state.registry_writer);
  state.registry->enable_optimization(std::move(env));
}

void optimize_armed(uint64_t begin, uint64_t end) {
  if (!g_wanted || !g_registered) return;
  AgentState& state = agent_state();
  std::lock_guard lock(state.registry_writer);
  state.registry->optimize_range(begin, end);
}

std::vector<protocol::ProbeState> probe_states(uint64_t begin, uint64_t end) {
  AgentState& state = agent_state();
  std::vector<core::ProbeState> states;
  {
    std::lock_guard lock(state.registry_writer);
    states = state.registry->states(begin, end);
  }
  std::vector<protocol::ProbeState> out;
  for (core::ProbeState& s : states) {
    std::string reason = std::move(s.reason);
    if (!s.optimized && reason.empty()) {
      reason = !g_wanted                  ? "optimization is off (--no-optimize)"
               : g_unavailable != nullptr ? g_unavailable
                                          : "not optimized";
    }
    out.push_back({s.address, s.optimized, std::move(reason)});
  }
  return out;
}

}  // namespace dprobe::agent
