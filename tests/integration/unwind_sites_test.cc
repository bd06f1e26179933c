// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// C++ exceptions and longjmp through optimized probe sites
// (tests/programs/unwind_sites.cc). A probe on a call, or on the
// instruction before it, displaces the call into its trampoline, which
// pushes the original return address: the unwinder must find catcher's
// landing pad from the address pass_through's call pushed, the exception
// must pass through the call in catcher, longjmp must leave jump_through
// from inside jumper, and setjmp must return twice to the address its
// (displaced) call pushed. The program's answers are the untraced ones,
// each probe is [OPTIMIZED] and hit once a round, and the return probes
// see the right values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "integration/dprobe_run.h"
#include "integration/elf_tools.h"
#include "integration/probe_list.h"

namespace dprobe::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr long kRounds = 30;

// Each function's call that an exception or a longjmp passes through.
const std::vector<std::string> kCallers = {"pass_through", "catcher", "jump_through", "landing"};

struct CallSite {
  uint64_t call = 0;    // offset of the function's first call
  uint64_t before = 0;  // of the instruction before it
};

std::optional<CallSite> first_call(const std::string& path, const std::string& function) {
  const std::vector<DisassembledInsn> insns = disassemble(path, function);
  for (size_t i = 1; i < insns.size(); ++i) {
    if (insns[i].mnemonic.starts_with("call"))
      return CallSite{insns[i].offset, insns[i - 1].offset};
  }
  return std::nullopt;
}

// The values round r must show (tests/programs/unwind_sites.cc).
long catcher_answer(long r) { return r % 2 == 0 ? 1000 + r + 1 : 2 * r + 1; }
long landing_answer(long r) { return r % 3 == 0 ? r + 5 : 7 * r + r % 3 + 1; }

class UnwindSites : public ::testing::TestWithParam<const char*> {
 protected:
  std::string path() const { return program(std::string("unwind_sites_") + GetParam()); }

  // Probes at `offset_of` each caller (with its first argument), and
  // return probes on catcher and landing: run, then every check.
  void trace_through(uint64_t CallSite::*offset_of) {
    if (find_tool("objdump").empty()) GTEST_SKIP() << "needs objdump to find the calls";
    const RunResult untraced = run_program({path(), std::to_string(kRounds)});
    ASSERT_EQ(untraced.status, 0) << untraced;
    ASSERT_THAT(untraced.out, StartsWith("unwind_sites: caught 15 jumped 20 sum ")) << untraced;

    std::vector<std::string> definitions;
    std::map<std::string, uint64_t> sites;
    for (const std::string& caller : kCallers) {
      const std::optional<CallSite> site = first_call(path(), caller);
      ASSERT_TRUE(site) << caller << " has no call";
      sites[caller] = (*site).*offset_of;
      definitions.push_back("p:u/" + caller + " " + caller + "+" + std::to_string(sites[caller]) +
                            " r=%di");
    }
    definitions.push_back("r:u/catcher_ret catcher ret=$retval:s64");
    definitions.push_back("r:u/landing_ret landing ret=$retval:s64");
    TempDir dir;
    ASSERT_TRUE(dir.ok());
    const RunResult run = run_traced(definitions, {path(), std::to_string(kRounds)},
                                     {"--probes", "-o", dir.file("trace")});
    ASSERT_EQ(run.status, 0) << run;
    EXPECT_EQ(run.out, untraced.out) << run;

    const std::map<ProbeSite, std::string> states = parse_probe_list(run.err);
    for (const auto& [caller, offset] : sites) {
      const auto state = states.find({caller, offset});
      ASSERT_NE(state, states.end()) << caller << "+" << offset << " not listed:\n" << run.err;
      if (breakpoints_only()) {
        EXPECT_THAT(state->second, HasSubstr("BREAKPOINT")) << caller;
      } else {
        EXPECT_EQ(state->second, kOptimized) << caller << "+" << offset;
      }
    }

    const std::vector<TraceLine> lines = parse_trace(read_file(dir.file("trace")));
    for (const std::string& caller : kCallers) {
      const std::vector<TraceLine> hits = lines_of(lines, caller);
      ASSERT_EQ(hits.size(), static_cast<size_t>(kRounds)) << caller << "\n" << run;
      // At the call itself the argument is in %di; before it, not always.
      if (offset_of == &CallSite::call && caller != "landing") {
        for (long r = 0; r < kRounds; ++r)
          EXPECT_EQ(hits[static_cast<size_t>(r)].arg("r"), hex(static_cast<uint64_t>(r))) << caller;
      }
    }
    const std::vector<TraceLine> catcher_returns = lines_of(lines, "catcher_ret");
    const std::vector<TraceLine> landing_returns = lines_of(lines, "landing_ret");
    ASSERT_EQ(catcher_returns.size(), static_cast<size_t>(kRounds)) << run;
    ASSERT_EQ(landing_returns.size(), static_cast<size_t>(kRounds)) << run;
    for (long r = 0; r < kRounds; ++r) {
      const auto at = static_cast<size_t>(r);
      EXPECT_EQ(catcher_returns[at].arg("ret"), std::to_string(catcher_answer(r))) << "round " << r;
      EXPECT_EQ(landing_returns[at].arg("ret"), std::to_string(landing_answer(r))) << "round " << r;
    }
  }
};

// The jump displaces exactly the call: the trampoline makes it.
TEST_P(UnwindSites, ThroughAProbedCall) { trace_through(&CallSite::call); }

// The jump displaces the instruction before the call and the call.
TEST_P(UnwindSites, ThroughAProbeJustBeforeTheCall) { trace_through(&CallSite::before); }

INSTANTIATE_TEST_SUITE_P(Levels, UnwindSites, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
