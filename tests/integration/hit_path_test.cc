// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// An optimized probe's trampoline saves the general registers and flags,
// never the x87/SSE/AVX state (x86_64) or the FP/SIMD/SVE state (arm64):
// the probed function's floating-point and vector arguments live there.
// So no function on the hit path may touch that state, nor call the C
// library's memcpy/memset (which use it; the agent has its own). The
// agents as built (this host's, and the arm64 cross build's when there is
// one) are disassembled and their hit-path functions are read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

// Functions an optimized hit (entry or return) may run, by name.
constexpr std::array kHitPath = {
    "dprobe_optimized_hit",
    "on_probe_hit",
    "run_handlers",
    "record_entry_event",
    "count_misses",
    "hijack_return",
    "dprobe_return_hit",
    "drop_stale",
    "sweep_zombies",
    "admitted_handlers",
    "fetch_entry_args",
    // The return-address hijack (arch/runtime/return_stubs.h).
    "entry_frame",
    "read_return_address",
    "replace_return_address",
    "frame_returns_to",
    "complete_return_regs",
    "record_return",
    "run_return_events",
    "ensure_ring",
    "refresh_ring",
    "claim_slot",
    "count_record_miss",
    "signal_stack_of",
    "monotonic_ns",
    "current_cpu",  // and current_cpu_from_vdso
    "store_event_args",
    "RingWriter",
    "ProbeTable::find",
    "ReturnInstancePool::acquire",
    "ReturnInstancePool::release",
    // A rewritten system call site's trampoline (syscall_dispatch.h).
    "dprobe_syscall_enter",
    "dprobe_syscall_exit",
    "record_enter",
    "record_exit",
    "block_real_mask",
    "enter_program_open",
    "leave_program_open",
    "takes_descriptor",
    // An event's analysis (--filter, --trigger, --stacktrace).
    "analyze_hit",
    "store_stack",
    "add_to_hists",
    "filter_matches",
    "filter_glob_match",
    "hist_update",
    "hist_field_value",
    "capture_user_stack",
    "unwind_stack",
    // The agent's own (agent/memory_functions.cc), which the compiler calls.
    "memset",
    "memcpy",
    "memmove",
};

std::string agent_library() {
  std::string binary = DPROBE_BINARY;
  return binary.substr(0, binary.rfind('/')) + "/libdprobe_agent.so";
}

std::string disassembly(const std::string& objdump, const std::string& path) {
  std::string text;
  FILE* pipe =
      ::popen((objdump + " -d -C --no-show-raw-insn " + path + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) text.append(buffer, n);
  ::pclose(pipe);
  return text;
}

bool on_hit_path(const std::string& function) {
  for (const char* name : kHitPath) {
    if (function.find(name) != std::string::npos) return true;
  }
  return false;
}

struct Offences {
  size_t functions = 0;  // hit-path functions found
  std::vector<std::string> lines;
};

Offences hit_path_offences(const std::string& text, const std::regex& forbidden) {
  const std::regex header(R"(^[0-9a-f]+ <(.*)>:$)");
  Offences found;
  std::string current;
  bool watched = false;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    std::smatch match;
    if (std::regex_match(line, match, header)) {
      current = match[1];
      watched = on_hit_path(current);
      found.functions += watched ? 1 : 0;
      continue;
    }
    if (watched && std::regex_search(line, forbidden)) found.lines.push_back(current + ": " + line);
  }
  return found;
}

#if defined(__x86_64__)
TEST(HitPath, TouchesNoVectorOrX87StateAndCallsNoLibcCopy) {
  const std::string text = disassembly("objdump", agent_library());
  if (text.empty()) GTEST_SKIP() << "needs objdump";
  const std::regex forbidden(
      R"(%[xyz]mm|%st|%mm[0-7]|%k[0-7]|xsave|fxsave|fxrstor|xrstor|mxcsr|emms|<(memcpy|memset|memmove)@plt>)");
  const Offences found = hit_path_offences(text, forbidden);
  EXPECT_GE(found.functions, 15u) << "the hit path's functions were not found by name";
  EXPECT_THAT(found.lines, ::testing::IsEmpty());
}
#endif

// The arm64 agent: no FP/SIMD or SVE register (q, v, d, s, h, b, z, p as
// operands), no FPSR/FPCR, no call into the C library's copies.
TEST(HitPath, Arm64AgentTouchesNoFpSimdStateAndCallsNoLibcCopy) {
  const std::string agent = DPROBE_ARM64_AGENT;
  if (std::FILE* f = std::fopen(agent.c_str(), "rb")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "no arm64 cross build at " << agent;
  }
  const std::string text = disassembly("aarch64-linux-gnu-objdump", agent);
  if (text.empty()) GTEST_SKIP() << "needs aarch64-linux-gnu-objdump";
  const std::regex forbidden(
      R"([\s,\[{][qvdshbzp]([0-9]|[12][0-9]|3[01])(\.[0-9a-z]+)?(\[[0-9]+\])?(/[zm])?(,|\]|\}|$)|fpsr|fpcr|<(memcpy|memset|memmove)@plt>)");
  const Offences found = hit_path_offences(text, forbidden);
  EXPECT_GE(found.functions, 15u) << "the hit path's functions were not found by name";
  EXPECT_THAT(found.lines, ::testing::IsEmpty());
  // The pattern does see vector registers: the rest of the agent has some.
  EXPECT_NE(text.find("\tstp\tq"), std::string::npos);
  EXPECT_TRUE(std::regex_search(std::string("\tstp\tq0, q1, [sp, #32]"), forbidden));
}

}  // namespace
}  // namespace dprobe::integration
