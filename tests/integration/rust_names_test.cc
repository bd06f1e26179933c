// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// A Rust program's functions by their source names, in both of rustc's
// manglings (tests/programs/rust_calls.rs): listed without rustc's hash,
// probed as `rust_calls::fib`, the events named after the function, the
// calls counted exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "dprobe_run.h"

namespace dprobe::integration {
namespace {

// fib(k) by plain recursion makes 2 fib(k+1) - 1 calls.
uint64_t fib(uint64_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

uint64_t calls_for(uint64_t rounds) {
  uint64_t calls = 0;
  for (uint64_t k = 0; k < rounds; ++k) calls += 2 * fib(k + 1) - 1;
  return calls;
}

class RustNames : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (::access(program(GetParam()).c_str(), X_OK) != 0) {
      GTEST_SKIP() << "no " << GetParam() << ": tests/programs builds it with rustc, which "
                   << "scripts/install-deps.sh installs";
    }
  }
};

TEST_P(RustNames, ListedWithoutTheHash) {
  const RunResult run = run_dprobe({"list", "-x", program(GetParam()), "rust_calls::*"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, ::testing::HasSubstr(" rust_calls::fib\n")) << run;
  EXPECT_THAT(run.out, ::testing::Not(::testing::HasSubstr("::h"))) << run;
}

TEST_P(RustNames, ProbedByTheSourceNameAndCountedExactly) {
  const std::string prog = program(GetParam());
  const RunResult run =
      run_traced({"p rust_calls::fib n=%di:u64", "r rust_calls::fib rv=$retval:u64"}, {prog, "8"},
                 {"--profile"});
  ASSERT_EQ(run.status, 0) << run;
  uint64_t sum = 0;
  for (uint64_t k = 0; k < 8; ++k) sum += fib(k);
  EXPECT_THAT(run.out, ::testing::HasSubstr(std::to_string(sum) + "\n"));
  size_t entries = 0;
  size_t returns = 0;
  for (const TraceLine& line : parse_trace(run.out)) {
    if (line.event == "p_fib_0") ++entries;
    if (line.event == "r_fib_0") ++returns;
    if (line.event == "p_fib_0") {
      EXPECT_THAT(line.location, ::testing::StartsWith("rust_calls::fib+0x0/")) << line;
    }
  }
  EXPECT_EQ(entries, calls_for(8)) << run;
  EXPECT_EQ(returns, calls_for(8)) << run;
}

TEST_P(RustNames, AWildcardNamesItsEventsAfterTheFunctions) {
  const std::string prog = program(GetParam());
  const RunResult run = run_dprobe({"check", "-e", "p " + prog + ":rust_calls::fib*"});
  ASSERT_EQ(run.status, 0) << run;
  EXPECT_THAT(run.out, ::testing::HasSubstr("p:dprobes/p_fib_0 ")) << run;
}

INSTANTIATE_TEST_SUITE_P(Manglings, RustNames,
                         ::testing::Values("rust_calls_legacy", "rust_calls_v0"));

}  // namespace
}  // namespace dprobe::integration
