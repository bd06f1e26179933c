// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Programs with signal handlers of their own (tests/programs/signals.c):
// the program's handlers run as they would untraced, and the probes keep
// firing, with faulting fetches, after the program takes SIGTRAP or
// SIGSEGV for itself, with every signal blocked, and across fork.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "integration/dprobe_run.h"

namespace dprobe::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kProbedCalls = 12;  // probed(0) .. probed(11), in every mode
constexpr uint64_t kPeekCalls = 6;     // peek(bad pointer or PROT_NONE page)

class Signals : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  std::string level() const { return std::get<0>(GetParam()); }
  std::string mode() const { return std::get<1>(GetParam()); }
  std::string exe() const { return program("signals_" + level()); }

  // Runs the mode with a probe on probed() and one on peek() whose fetches
  // fault, plus `extra` definitions.
  RunResult run(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> definitions = {
        "p:sig/probed probed i=%di:s64",
        "p:sig/peek peek v=+0(%di):u64 s=+0(%di):string a=+8(%di):u32[2]"};
    definitions.insert(definitions.end(), extra.begin(), extra.end());
    return run_traced(definitions, {exe(), mode()}, {"--profile"});
  }

  // The program ran its checks and passed; every call was traced.
  void expect_traced(const RunResult& result) const {
    EXPECT_EQ(result.status, 0) << result;
    EXPECT_THAT(result.out, HasSubstr("signals: ok\n")) << result;
    const auto lines = parse_trace(result.out);
    const auto probed = lines_of(lines, "probed");
    ASSERT_EQ(probed.size(), kProbedCalls) << result;
    for (uint64_t i = 0; i < kProbedCalls; ++i) {
      EXPECT_EQ(probed[i].arg("i"), std::to_string(i)) << probed[i];
      EXPECT_EQ(probed[i].tid, probed[0].tid) << "only the parent is traced: " << probed[i];
    }
    const auto peek = lines_of(lines, "peek");
    ASSERT_EQ(peek.size(), kPeekCalls) << result;
    for (const TraceLine& line : peek) {
      EXPECT_THAT(line.args,
                  ElementsAre(TraceArg{"v", "0"}, TraceArg{"s", "(fault)"}, TraceArg{"a", "{0,0}"}))
          << line;
    }
    const auto rows = parse_profile(result.err);
    const auto probed_row = profile_row(rows, "probed");
    const auto peek_row = profile_row(rows, "peek");
    ASSERT_TRUE(probed_row && peek_row) << result;
    EXPECT_EQ(probed_row->hits, kProbedCalls);
    EXPECT_EQ(peek_row->hits, kPeekCalls);
    EXPECT_EQ(probed_row->misses + peek_row->misses, 0u);
  }
};

TEST_P(Signals, HandlersRunAndProbesKeepFiring) { expect_traced(run()); }

INSTANTIATE_TEST_SUITE_P(Modes, Signals,
                         ::testing::Combine(::testing::Values("O0", "O2"),
                                            ::testing::Values("trap-sigaction", "trap-signal",
                                                              "segv", "blocked", "fork")),
                         [](const auto& info) {
                           std::string name =
                               std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

class SignalsProbeOnFault : public ::testing::TestWithParam<const char*> {};

// A probe on the very store that faults: the program's SIGSEGV handler
// sees the fault where it is in the program (f_store, as the kernel's
// uprobes show it after a fault in their out-of-line slot), takes it
// three times, and the probe counts each attempt.
TEST_P(SignalsProbeOnFault, ProgramHandlerSeesItsOwnFaultingPc) {
  const RunResult run =
      run_traced({"p:sig/store f_store p=%di v=%si:s64"},
                 {program(std::string("signals_") + GetParam()), "segv"}, {"--profile"});
  EXPECT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("signals: ok\n")) << run;
  const auto lines = lines_of(parse_trace(run.out), "store");
  ASSERT_EQ(lines.size(), 3u) << run;
  for (const TraceLine& line : lines) EXPECT_EQ(line.arg("v"), "1") << line;
}

INSTANTIATE_TEST_SUITE_P(Optimization, SignalsProbeOnFault, ::testing::Values("O0", "O2"));

}  // namespace
}  // namespace dprobe::integration
