// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A probe on every instruction boundary of tests/programs/boundaries.c
// (loops, branches, a jump table, RIP-relative loads and stores, calls, a
// recursion), optimized wherever the analysis allows: the program's result
// is the untraced one, and every probe is hit exactly as often as its
// instruction runs, counted by single-stepping the same run under ptrace
// (integration/step_counter.h), not by dprobe.
//
// A jump displaces at least five bytes, and a probe inside another's
// displaced bytes keeps the other a breakpoint: so the boundaries are
// spread over several runs, no two probes of a run closer than the longest
// displacement (4 bytes + a 15-byte instruction), and each gets its chance
// to be optimized.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "integration/probe_list.h"
#include "integration/step_counter.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kFunctions = {"sum_loop", "branches", "switcher", "rip_loads",
                                             "nested",   "recurse",  "calls",    "run_all"};
const std::string kRounds = "60";
constexpr uint64_t kSpread = 20;  // more than any displacement

using Boundary = ProbeSite;  // function, offset

std::string event_of(const Boundary& b) { return b.first + "_" + std::to_string(b.second); }

// The boundaries in groups: within a group, two of one function are
// kSpread bytes apart or more (those of two functions cannot meet: no
// jump crosses its function's end).
std::vector<std::vector<Boundary>> spread(const std::map<std::string, std::vector<uint64_t>>& all) {
  std::vector<std::vector<Boundary>> groups;
  for (const auto& [function, offsets] : all) {
    std::vector<uint64_t> last;  // per group, its last offset in this function
    for (uint64_t offset : offsets) {
      size_t g = 0;
      while (g < last.size() && offset < last[g] + kSpread) ++g;
      if (g == last.size()) last.push_back(0);
      last[g] = offset;
      if (g == groups.size()) groups.emplace_back();
      groups[g].push_back({function, offset});
    }
  }
  return groups;
}

// A reason without its addresses, to count alike ones together.
std::string without_addresses(std::string reason) {
  return std::regex_replace(reason, std::regex("0x[0-9a-f]+"), "ADDR");
}

class EveryBoundary : public ::testing::TestWithParam<const char*> {};

TEST_P(EveryBoundary, HitsAsOftenAsEachInstructionRunsAndTheResultIsUntouched) {
  const std::string path = program(std::string("boundaries_") + GetParam());
  if (find_tool("objdump").empty() || find_tool("nm").empty())
    GTEST_SKIP() << "needs objdump and nm for the instruction boundaries";
  const RunResult untraced = run_program({path, kRounds});
  ASSERT_EQ(untraced.status, 0) << untraced;
  ASSERT_THAT(untraced.out, HasSubstr("boundaries: result ")) << untraced;

  const StepCounts oracle = count_steps(path, {kRounds}, "run_all", kFunctions);
  ASSERT_EQ(oracle.error, "");
  ASSERT_EQ(oracle.runs.at({"run_all", 0}), 1u) << "the oracle stepped through one call";
  ASSERT_EQ(oracle.out, untraced.out) << "single-stepped, the program ran as untraced";

  std::map<std::string, std::vector<uint64_t>> boundaries;
  size_t total = 0;
  for (const std::string& function : kFunctions) {
    for (const DisassembledInsn& insn : disassemble(path, function)) {
      boundaries[function].push_back(insn.offset);
      ++total;
    }
    ASSERT_FALSE(boundaries[function].empty()) << function;
  }

  size_t optimized = 0;
  std::map<std::string, size_t> reasons;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  for (const std::vector<Boundary>& group : spread(boundaries)) {
    std::string definitions;
    for (const Boundary& b : group) {
      definitions +=
          "p:every/" + event_of(b) + " " + b.first + "+" + std::to_string(b.second) + "\n";
    }
    write_file(dir.file("defs"), definitions);
    const RunResult run = run_dprobe(
        {"run", "--probes", "-f", dir.file("defs"), "-o", dir.file("trace"), "--", path, kRounds});
    ASSERT_EQ(run.status, 0) << run;
    ASSERT_EQ(run.out, untraced.out) << definitions;
    std::map<std::string, uint64_t> hits;
    for (const TraceLine& line : parse_trace(read_file(dir.file("trace")))) ++hits[line.event];
    const std::map<Boundary, std::string> states = parse_probe_list(run.err);
    for (const Boundary& b : group) {
      const auto runs = oracle.runs.find(b);
      EXPECT_EQ(hits[event_of(b)], runs == oracle.runs.end() ? 0 : runs->second)
          << event_of(b) << " (" << b.first << "+" << hex(b.second) << ")";
      const auto state = states.find(b);
      ASSERT_NE(state, states.end()) << event_of(b) << " is not listed by --probes:\n" << run.err;
      if (state->second == kOptimized) {
        ++optimized;
      } else {
        ++reasons[without_addresses(state->second)];
      }
    }
  }
  std::string why;
  for (const auto& [reason, count] : reasons) why += "\n  " + std::to_string(count) + "x " + reason;
  std::printf("%zu of %zu boundaries optimized; the others:%s\n", optimized, total, why.c_str());
  if (breakpoints_only()) {
    EXPECT_EQ(optimized, 0u);
  } else {
    // Loops, branches and the jump table keep some breakpoints (74% and
    // 79% optimized when written); most of the code must be taken.
    EXPECT_GE(optimized * 2, total) << "too few optimized:" << why;
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, EveryBoundary, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
